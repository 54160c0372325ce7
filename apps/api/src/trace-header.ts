import { traceIdOf } from '@sluice/telemetry';
import type { FastifyRequest } from 'fastify';

/**
 * A request's valid W3C traceparent header, else undefined (invalid ones are ignored, per the W3C
 * spec): what a dispatch it makes (a dispatch, a replay, a dead-letter retry) records as its trace.
 */
export function traceparentOf(request: FastifyRequest): string | undefined {
  const value = request.headers.traceparent;
  return typeof value === 'string' && traceIdOf(value) !== null ? value : undefined;
}
