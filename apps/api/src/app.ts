import { randomUUID } from 'node:crypto';
import type { Clock } from '@sluice/core';
import type { Gateway, QuotaRepository, RuleRepository } from '@sluice/gateway';
import type { Logger, Metrics } from '@sluice/telemetry';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { installErrorHandling } from './plugins/errors.js';
import { installOpenApi } from './plugins/openapi.js';
import { installRequestLog } from './plugins/request-log.js';
import { installValidation } from './plugins/validation.js';
import type { Readiness } from './readiness.js';
import { dispatchRoutes } from './routes/dispatch.js';
import { operationsRoutes } from './routes/operations.js';
import { quotasRoutes } from './routes/quotas.js';
import { rulesRoutes } from './routes/rules.js';

export interface ApiDeps {
  gateway: Gateway;
  rules: RuleRepository;
  quotas: QuotaRepository;
  clock: Clock;
  metrics: Metrics;
  readiness: Readiness;
  logger: Logger;
  maxBodyBytes: number;
  requestTimeoutMs?: number;
  version?: string;
}

const MAX_REQUEST_ID = 128;

/** Builds the HTTP API (not listening). Routes are thin: validate, call the gateway, serialize. */
export async function buildApiApp(deps: ApiDeps): Promise<FastifyInstance> {
  const app = Fastify({
    // pino's Logger carries extra generics; Fastify only needs its base logger shape.
    loggerInstance: deps.logger as FastifyBaseLogger,
    disableRequestLogging: true,
    bodyLimit: deps.maxBodyBytes,
    requestTimeout: deps.requestTimeoutMs ?? 0,
    return503OnClosing: true,
    // Honour a caller's request id (bounded) so one id follows a request through the load balancer.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && given.length > 0 && given.length <= MAX_REQUEST_ID ? given : randomUUID();
    },
  });
  installValidation(app);
  installErrorHandling(app, { maxBodyBytes: deps.maxBodyBytes });
  installRequestLog(app, deps.metrics);
  // While draining, close each connection after its response: otherwise a client's idle
  // keep-alive socket would hold the shutdown open until its keep-alive timeout.
  app.addHook('onSend', async (_request, reply) => {
    if (deps.readiness.draining) reply.header('connection', 'close');
  });
  await installOpenApi(app, deps.version ?? '0.1.0');
  await app.register(operationsRoutes, { metrics: deps.metrics, readiness: deps.readiness });
  await app.register(dispatchRoutes, { gateway: deps.gateway });
  await app.register(rulesRoutes, { rules: deps.rules, clock: deps.clock });
  await app.register(quotasRoutes, { quotas: deps.quotas });
  return app;
}
