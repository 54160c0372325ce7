export * from './logger.js';
export { logThrottle } from './log-throttle.js';
export * from './metrics.js';
export { OwnedSeries } from './owned-series.js';
export { startTracing, type Tracing } from './tracing/start.js';
export { currentTraceCarrier, withTraceCarrier } from './tracing/trace-carrier.js';
export { activeSpan, inSpan, inSpanSync, traceIdOf, type Span, type Tracer } from './tracing/spans.js';
