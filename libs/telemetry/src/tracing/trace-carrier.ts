import { ROOT_CONTEXT, context, propagation, trace, type Link, type Tracer } from '@opentelemetry/api';
import { settleSpan } from './spans.js';

/** W3C trace context as text (`traceparent`, `tracestate`): how a trace crosses into a job. */
export type TraceCarrier = Record<string, string>;

/** The active trace context as a carrier, or undefined outside a (sampled or not) span: no job data grows then. */
export function currentTraceCarrier(): TraceCarrier | undefined {
  if (trace.getActiveSpan() === undefined) return undefined;
  const carrier: TraceCarrier = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/**
 * Runs `work` in a span named `name` that continues the trace of `carrier` — as a child, or, with
 * `link`, linked to it: as the root of a new trace (a recurring occurrence is its own trace, not
 * part of the request that created its definition) or as a child of the active span (an approved
 * action runs in the approval link's request). Without a tracer, just runs `work`.
 */
export function withTraceCarrier<T>(
  tracer: Tracer | null,
  name: string,
  carrier: TraceCarrier | undefined,
  work: () => Promise<T>,
  opts: { link?: 'new-trace' | 'active-trace'; attributes?: Record<string, string | number | boolean> } = {},
): Promise<T> {
  if (tracer === null) return work();
  const parent = carrier === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, carrier);
  const parentSpan = trace.getSpan(parent);
  const links: Link[] = opts.link && parentSpan ? [{ context: parentSpan.spanContext() }] : [];
  // Linked, the span is the root of a new trace, or a child of whatever span is active now.
  const base = opts.link === 'new-trace' ? ROOT_CONTEXT : opts.link === 'active-trace' ? context.active() : parent;
  return tracer.startActiveSpan(name, { links, ...(opts.attributes ? { attributes: opts.attributes } : {}) }, base, (span) => settleSpan(span, work));
}
