import type { Logger, Metrics } from '@sluice/telemetry';
import type { Job, JobHandler } from '@sluice/state';

/**
 * Logging and metrics wrapped once around every job handler, so no feature repeats them. A
 * handler error is logged and re-thrown: the scheduler owns retries.
 */
export function instrumentJob(kind: string, handler: JobHandler, deps: { logger: Logger; metrics: Metrics }): JobHandler {
  const log = deps.logger.child({ job_kind: kind });
  return async (job: Job) => {
    const started = process.hrtime.bigint();
    try {
      await handler(job);
      deps.metrics.jobs.inc({ kind, result: 'success' });
      log.debug({ job_id: job.id, attempt: job.attempt }, 'job done');
    } catch (err) {
      deps.metrics.jobs.inc({ kind, result: 'failure' });
      log.warn({ job_id: job.id, attempt: job.attempt, err }, 'job failed');
      throw err;
    } finally {
      deps.metrics.jobDuration.observe({ kind }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
}
