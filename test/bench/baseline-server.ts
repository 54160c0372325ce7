/**
 * Scenario (a), the baseline: a bare Fastify server with one POST route that validates the
 * same body against the same JSON Schema as `POST /v1/dispatch` (ActionInput → JSON Schema
 * 2020-12, compiled by Ajv with the API's options) and answers an `executed`-shaped outcome.
 * No logger, no hooks, no pipeline. Usage: node --import tsx baseline-server.ts --port N [--work-us U] [--tracing-endpoint URL]
 *
 * `--work-us U` spins the CPU for U microseconds in each request (no allocation, no I/O): the
 * calibration scenario (x), which shows what a fixed amount of extra work per request costs on
 * the machine at hand, so the other scenarios' ratios to (a) can be read against it.
 *
 * `--tracing-endpoint URL` starts tracing as (k) does (the same @sluice/telemetry start-up: the
 * OpenTelemetry SDK, every trace sampled, OTLP/HTTP to URL, @fastify/otel's request span) and
 * records the spans of a plain dispatch: the request span with the dispatch's attributes, and one
 * `stage execute` child. Scenario (l): what the SDK costs per request with nothing else to do,
 * the floor under tracing's cost in (k).
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ActionInput, DispatchQuery } from '@sluice/core';
import { activeSpan, inSpanSync, startTracing, type Tracing } from '@sluice/telemetry';
import { Ajv2020 } from 'ajv/dist/2020.js';
import Fastify from 'fastify';
import { z } from 'zod';
import { benchTracing } from './sluice-config.js';

const KNOWN_FORMATS = ['date-time', 'date', 'time', 'duration', 'uri', 'email', 'uuid', 'ipv4', 'ipv6'] as const;

function makeAjv(coerce: boolean): Ajv2020 {
  return new Ajv2020({
    allErrors: false,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    strict: true,
    formats: Object.fromEntries(KNOWN_FORMATS.map((f) => [f, true])),
  });
}

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

/** The spans of a plain dispatch in (k), with attributes of the same number and shape. */
function recordDispatchSpans(tracing: Tracing, actionId: string): void {
  activeSpan()?.setAttributes({
    'sluice.action_id': actionId,
    'sluice.namespace': 'bench',
    'sluice.tenant': 'bench',
    'sluice.provider': 'noop',
    'sluice.action_type': 'bench',
    'sluice.outcome': 'executed',
  });
  inSpanSync(
    tracing.tracer,
    'stage execute',
    () => 'executed',
    (span, outcome) => span.setAttributes({ 'sluice.outcome': outcome, 'sluice.provider': 'noop', 'sluice.attempts': 1 }),
  );
}

/** Busy for `ms` milliseconds of wall time (the server runs alone on its core, so CPU time too). */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spinning: the work stands for CPU a gateway would spend per request
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { port: { type: 'string' }, 'work-us': { type: 'string' }, 'tracing-endpoint': { type: 'string' } } });
  const port = Number(values.port ?? 8080);
  const workMs = Number(values['work-us'] ?? 0) / 1000;
  const endpoint = values['tracing-endpoint'];
  const tracing = endpoint ? await startTracing(benchTracing(endpoint), { role: 'baseline' }) : null;
  const app = Fastify();
  if (tracing) await app.register(tracing.fastifyPlugin);
  const bodyAjv = makeAjv(false);
  const queryAjv = makeAjv(true);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : queryAjv).compile(schema));
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.get('/ready', async () => ({ status: 'ready' }));
  app.post<{ Body: { id?: string } }>(
    '/v1/dispatch',
    { schema: { body: jsonSchema(ActionInput), querystring: jsonSchema(DispatchQuery) } },
    async (request) => {
      if (workMs > 0) spin(workMs);
      const actionId = request.body.id ?? randomUUID();
      if (tracing) recordDispatchSpans(tracing, actionId);
      return { outcome: 'executed', action_id: actionId, response: { status: 'success', body: {}, headers: {} } };
    },
  );
  const stop = () =>
    void app.close().then(async () => {
      await tracing?.shutdown();
      process.exit(0);
    });
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await app.listen({ port, host: '127.0.0.1' });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
