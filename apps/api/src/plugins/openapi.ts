import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/**
 * The OpenAPI 3.1 document is generated from the route schemas (which come from the zod
 * schemas in libs/core); it is served at /api-doc/openapi.json and rendered at /swagger-ui/.
 * Register before the routes so every route is collected.
 */
export async function installOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Sluice action gateway',
        version,
        description: 'Multi-tenant action gateway: dispatch actions through quotas, rules and providers.',
      },
      tags: [
        { name: 'dispatch', description: 'Submit actions' },
        { name: 'rules', description: 'Rules, enabled flags, reload and the playground' },
        { name: 'quotas', description: 'Per-tenant quota policies and their usage' },
        { name: 'auth', description: 'Login and logout (JWT)' },
        { name: 'audit', description: 'Audit trail, replay, hash-chain verification, compliance status' },
        { name: 'analytics', description: 'Counts, outcomes and latency over the audit trail' },
        { name: 'retention', description: 'Per-tenant retention policies (audit, chain and event lifetimes)' },
        { name: 'recurring', description: 'Recurring actions: dispatch a template on a cron schedule' },
        { name: 'events', description: 'Event lifecycles tracked by state machines' },
        { name: 'groups', description: 'Event groups: batched events and their consolidated notifications' },
        { name: 'silences', description: 'Silences: suppress matching actions of a tenant for a time' },
        { name: 'time-intervals', description: 'Named recurring schedules that rules mute or activate on' },
        { name: 'approvals', description: 'Human approvals: pending actions and their signed decision links' },
        { name: 'chains', description: 'Task chains: runs (list, inspect, cancel, graph) and definitions' },
        { name: 'circuit-breakers', description: 'Provider circuit breakers: state, trip and reset (shared by all replicas)' },
        { name: 'stream', description: 'The live event stream (server-sent events)' },
        { name: 'bus', description: 'Message bus: schema registry, topics, validated publish (503 while bus.enabled is off)' },
        { name: 'embeddings', description: 'Embedding similarity (the provider behind semantic_match conditions)' },
        { name: 'dlq', description: 'Dead-letter queue: failed actions kept for retry or drain' },
        { name: 'alertmanager', description: 'Alertmanager compatibility: alerts from Prometheus and Alertmanager, silences for amtool' },
        { name: 'operations', description: 'Health, readiness and metrics' },
      ],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'a JWT from /v1/auth/login, or an API key' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          basic: { type: 'http', scheme: 'basic', description: 'an API key as the password (any user name): what Prometheus basic_auth sends' },
        },
      },
      // Every route needs one of them when auth is enabled, except those marked `security: []`.
      security: [{ bearer: [] }, { apiKey: [] }, { basic: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/swagger-ui' });
  app.get('/api-doc/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
