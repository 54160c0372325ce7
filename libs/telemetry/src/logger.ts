import { isoString } from '@sluice/core';
import { trace } from '@opentelemetry/api';
import { pino, type Logger, type LoggerOptions } from 'pino';
import { processStdout } from './turn-buffered-destination.js';

export type { Logger } from 'pino';

/** Header and field paths that may carry credentials; pino replaces them before a line is written. */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.password',
  '*.token',
  '*.secret',
  '*.hmac_secret',
  '*.api_key',
];

export interface LoggerSettings {
  level: string;
  /** Process role, bound to every line (api, worker, serve). */
  role: string;
  /** Where lines go; stdout by default. Tests pass an in-memory stream. */
  destination?: NodeJS.WritableStream;
  /** With tracing on: every line written inside a span carries its trace_id and span_id. */
  traceIds?: boolean;
}

/** The active span's ids, for a log line (nothing outside a span). */
function activeSpanIds(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (span === undefined) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** pino's isoTime through isoString, which formats the date and time once per second. */
function isoTime(): string {
  return `,"time":"${isoString(Date.now())}"`; // Date.now looked up per call, as pino does, so fake timers still apply
}

/** One JSON logger per process. Secrets are redacted; payloads are never logged at info. */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level,
    base: { service: 'sluice', role: settings.role, pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    timestamp: isoTime,
    ...(settings.traceIds ? { mixin: activeSpanIds } : {}),
  };
  return pino(options, settings.destination ?? processStdout());
}
