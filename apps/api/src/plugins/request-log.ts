import type { Metrics } from '@sluice/telemetry';
import type { FastifyInstance } from 'fastify';

/**
 * One log line and one metric sample per request, written when the response is done. Fastify's
 * own request logging (two lines per request) is off. Payloads are never logged.
 */
export function installRequestLog(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const seconds = reply.elapsedTime / 1000;
    metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ method: request.method, route }, seconds);
    const traceparent = request.headers.traceparent;
    request.log.info(
      {
        method: request.method,
        url: request.url,
        route,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        ...(request.caller ? { caller: request.caller.id } : {}),
        ...(typeof traceparent === 'string' ? { traceparent } : {}),
      },
      'request',
    );
  });
}
