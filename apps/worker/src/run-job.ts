import { isBackendConnectionError } from '@sluice/core';
import { logThrottle, withTraceCarrier, type Logger, type Metrics, type Tracer } from '@sluice/telemetry';
import type { Job, JobHandler } from '@sluice/state';

/**
 * Logging, metrics and (with tracing on) a span wrapped once around every job handler, so no
 * feature repeats them. The span continues the trace the job was enqueued in; a repeat
 * schedule's occurrence starts a trace of its own, linked to the one that declared it. A
 * handler error is logged and re-thrown: the scheduler owns retries.
 */
export function instrumentJob(kind: string, handler: JobHandler, deps: { logger: Logger; metrics: Metrics; tracer?: Tracer | undefined }): JobHandler {
  const run = counted(kind, handler, deps);
  const { tracer } = deps;
  if (tracer === undefined) return run;
  return (job: Job) =>
    // Housekeeping schedules (sweeps, reapers) carry no trace: a root trace each tick would be noise.
    job.scheduled === true && job.trace === undefined
      ? run(job)
      : withTraceCarrier(tracer, `job ${kind}`, job.trace, () => run(job), {
          link: job.scheduled === true || job.traceLink === true ? 'new-trace' : undefined,
          attributes: { 'sluice.job_kind': kind, 'sluice.job_id': job.id, 'sluice.attempt': job.attempt },
        });
}

/** A job kind's failures with one message are logged once per window, with how many were held back. */
const FAILURE_LOG_WINDOW_MS = 30_000;

function counted(kind: string, handler: JobHandler, deps: { logger: Logger; metrics: Metrics }): JobHandler {
  const log = deps.logger.child({ job_kind: kind });
  // A full or unreachable backend fails every job alike, each retry too: a line apiece filled disks.
  const throttle = logThrottle(FAILURE_LOG_WINDOW_MS, Date.now);
  return async (job: Job) => {
    const started = process.hrtime.bigint();
    try {
      await handler(job);
      deps.metrics.jobs.inc({ kind, result: 'success' });
      log.debug({ job_id: job.id, attempt: job.attempt }, 'job done');
    } catch (err) {
      deps.metrics.jobs.inc({ kind, result: 'failure' });
      if (isBackendConnectionError(err)) deps.metrics.stateErrors.inc({ operation: 'job' });
      const suppressed = throttle(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
      if (suppressed !== null) log.warn({ job_id: job.id, attempt: job.attempt, err, suppressed }, 'job failed');
      throw err;
    } finally {
      deps.metrics.jobDuration.observe({ kind }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
}
