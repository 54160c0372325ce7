import { ErrorBody, errors } from '@sluice/core';
import { EMBEDDING_COUNTERS, OUTCOME_COUNTERS, type Metrics } from '@sluice/telemetry';
// Types only: route schemas carry OpenAPI `tags` and `summary` (the API documents these routes; the worker does not load swagger).
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { sendError } from './error-handler.js';
import { responseSchema } from './json-schema.js';
import type { Readiness } from './readiness.js';

const Counters = z.object({
  ...Object.fromEntries(OUTCOME_COUNTERS.map((n) => [n, z.number().int()])),
  embedding: z
    .object(Object.fromEntries(EMBEDDING_COUNTERS.map((n) => [n, z.number().int()])))
    .optional()
    .describe('only when an embedding provider is configured'),
});
const Health = z.object({ status: z.literal('ok'), metrics: Counters });

/** Liveness, readiness and metrics; shared by the API and the worker's own small server. */
/** Prometheus's text exposition format (version 0.0.4). */
const PROMETHEUS_TEXT = { type: 'string', description: 'text/plain; version=0.0.4' } as const;

export async function operationsRoutes(app: FastifyInstance, opts: { metrics: Metrics; readiness: Readiness }): Promise<void> {
  const { metrics, readiness } = opts;
  const tags = ['operations'];

  app.get(
    '/health',
    { config: { access: 'public' }, schema: { tags, summary: 'Liveness: the process is up (never checks Redis)', response: { 200: responseSchema(Health) } } },
    async () => ({
      status: 'ok' as const,
      metrics: metrics.snapshot(),
    }),
  );

  app.get(
    '/ready',
    {
      config: { access: 'public' },
      schema: {
        tags,
        summary: 'Readiness: not draining and the state backend answers',
        response: { 200: responseSchema(z.object({ status: z.literal('ready') })), 503: responseSchema(ErrorBody) },
      },
    },
    async (_request, reply) => {
      const reason = await readiness.check();
      // Rendered, not thrown: probes poll this while draining, and the error handler would log each 503 at error.
      if (reason) return sendError(reply, errors.notReady(reason));
      return { status: 'ready' as const };
    },
  );

  app.get(
    '/metrics',
    {
      config: { access: 'public' },
      schema: {
        tags,
        summary: 'Prometheus text; the JSON counters with Accept: application/json',
        response: {
          200: { description: 'the metrics', content: { 'text/plain': { schema: PROMETHEUS_TEXT }, 'application/json': { schema: { type: 'object' } } } },
        },
      },
    },
    async (request, reply) => {
      const accept = request.headers.accept ?? '';
      if (accept.includes('application/json')) return metrics.snapshot();
      return reply.type(metrics.contentType).send(await metrics.prometheusText());
    },
  );

  const prometheusOnly = { 200: { description: 'the metrics', content: { 'text/plain': { schema: PROMETHEUS_TEXT } } } };
  app.get(
    '/metrics/prometheus',
    { config: { access: 'public' }, schema: { tags, summary: 'Prometheus text exposition', response: prometheusOnly } },
    async (_request, reply) => reply.type(metrics.contentType).send(await metrics.prometheusText()),
  );
}
