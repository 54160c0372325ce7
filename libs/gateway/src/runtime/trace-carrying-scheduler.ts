import type { EnqueueOptions, RepeatOptions, Scheduler } from '@sluice/state';
import { currentTraceCarrier } from '@sluice/telemetry';

/**
 * With tracing on, every job enqueued or scheduled inside a span carries that span's trace
 * context (`traceparent`, `tracestate`) in its envelope: a group flush, a chain step, an
 * approval's execution or a recurring occurrence continues (or links to) the trace that made it.
 */
export function traceCarryingScheduler(scheduler: Scheduler): Scheduler {
  const withTrace = <T extends EnqueueOptions | RepeatOptions>(opts: T): T => {
    if (opts.trace !== undefined) return opts;
    const trace = currentTraceCarrier();
    return trace === undefined ? opts : { ...opts, trace };
  };
  return {
    backend: scheduler.backend,
    enqueue: (kind, opts) => scheduler.enqueue(kind, withTrace(opts)),
    repeat: (kind, opts) => scheduler.repeat(kind, withTrace(opts)),
    cancel: (kind, id) => scheduler.cancel(kind, id),
    consume: (kind, handler, opts) => scheduler.consume(kind, handler, opts),
    start: () => scheduler.start(),
    close: () => scheduler.close(),
    jobCounts: () => scheduler.jobCounts(),
  };
}
