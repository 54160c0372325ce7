import { SpanStatusCode, TraceFlags, context, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';

export type { Span, Tracer } from '@opentelemetry/api';

/**
 * The active span when it is not sampled, so no child of it would be either (the sampler is
 * parent-based): its children are not started at all. Starting one still asks the sampler,
 * makes ids and a context, for a span that records nothing; at a low `sample_ratio` that was
 * most of what tracing cost the requests it did not sample.
 */
function unsampledParent(): Span | undefined {
  const active = trace.getActiveSpan();
  if (active === undefined || active.isRecording()) return undefined;
  return (active.spanContext().traceFlags & TraceFlags.SAMPLED) === 0 ? active : undefined;
}

/**
 * Runs `work` in a new active span (a child of the active one), ending it when `work` settles and
 * marking it failed when it throws. Only called with a tracer: with tracing off the callers take
 * a branch without spans, so the request path pays nothing for them.
 */
export function inSpan<T>(tracer: Tracer, name: string, attributes: Attributes | undefined, work: (span: Span) => Promise<T>): Promise<T> {
  // The parent stands in: it records nothing either, and carries the trace id.
  const unsampled = unsampledParent();
  if (unsampled !== undefined) return work(unsampled);
  return tracer.startActiveSpan(name, attributes ? { attributes } : {}, (span) => settleSpan(span, () => work(span)));
}

/** Awaits `work` inside an already started span: marks the span failed if it throws, ends it either way. */
export async function settleSpan<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    markFailed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

function markFailed(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * Like inSpan for work that may finish synchronously: a synchronous result stays synchronous (no
 * promise, no microtask), so wrapping a step that usually has nothing to wait for costs little.
 * `annotate` sees the result before the span ends.
 */
export function inSpanSync<T>(tracer: Tracer, name: string, work: () => T | Promise<T>, annotate: (span: Span, result: T) => void): T | Promise<T> {
  if (unsampledParent() !== undefined) return work();
  const span = tracer.startSpan(name);
  const failed = (err: unknown): never => {
    markFailed(span, err);
    span.end();
    throw err;
  };
  let result: T | Promise<T>;
  try {
    result = context.with(trace.setSpan(context.active(), span), work);
  } catch (err) {
    return failed(err);
  }
  const done = (value: T): T => {
    annotate(span, value);
    span.end();
    return value;
  };
  return result instanceof Promise ? result.then(done, failed) : done(result);
}

/** The span of the active context (a request's, while its handler runs), if any. */
export function activeSpan(): Span | undefined {
  return trace.getActiveSpan();
}

/**
 * The trace id of a W3C `traceparent` header, or null when it is not a valid one (as the
 * propagator judges it with tracing on): version `ff`, an all-zero trace or parent id.
 */
export function traceIdOf(traceparent: string | undefined): string | null {
  const match = traceparent === undefined ? null : /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/.exec(traceparent);
  if (!match || match[1] === 'ff' || match[2] === '0'.repeat(32) || match[3] === '0'.repeat(16)) return null;
  return match[2] ?? null;
}
