import { isBackendConnectionError, isoString } from '@sluice/core';
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

/**
 * pino's error serializer, less a Redis command's arguments: ioredis puts the failed command on
 * its errors (`command.args`), and a refused audit write's arguments are the whole record, payload
 * included — a line of up to a megabyte, at the moment (an OOM, a failover) lines matter most.
 * A backend or peer being unreachable (Redis away or full, a refused or timed-out socket) is not a
 * bug: such errors go without a stack, which says nothing then but where each task noticed it (a
 * dozen traces per process per Redis outage).
 */
function serializeError(err: Error): Record<string, unknown> {
  const out = pino.stdSerializers.err(err) as Record<string, unknown>;
  dropCommandArgs(out, 0);
  if (isBackendConnectionError(err)) delete out.stack;
  return out;
}

/**
 * Also in the errors an error carries (an AggregateError's `aggregateErrors`, a failed
 * transaction's `previousErrors`), a few levels down: the serialized error is a plain tree.
 */
function dropCommandArgs(node: Record<string, unknown>, depth: number): void {
  const command = node.command as { name?: unknown; args?: unknown } | undefined;
  if (command !== null && typeof command === 'object' && Array.isArray(command.args)) {
    node.command = { name: command.name, args_count: command.args.length };
  }
  if (depth >= 4) return;
  for (const value of Object.values(node)) {
    const children = Array.isArray(value) ? value : [value];
    for (const child of children) {
      if (child !== null && typeof child === 'object' && !Array.isArray(child)) dropCommandArgs(child as Record<string, unknown>, depth + 1);
    }
  }
}

/** One JSON logger per process. Secrets are redacted; payloads are never logged at info. */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level,
    base: { service: 'sluice', role: settings.role, pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    serializers: { err: serializeError },
    timestamp: isoTime,
    ...(settings.traceIds ? { mixin: activeSpanIds } : {}),
  };
  return pino(options, settings.destination ?? processStdout());
}
