import { randomUUID } from 'node:crypto';
import { loadAuth } from '@sluice/auth';
import type { Runtime } from '@sluice/gateway';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { installAccessControl } from './plugins/access-control.js';
import { installErrorHandling } from './plugins/errors.js';
import { installOpenApi } from './plugins/openapi.js';
import { installRequestLog } from './plugins/request-log.js';
import { installValidation } from './plugins/validation.js';
import { RateLimiter } from './rate-limiter.js';
import type { Readiness } from './readiness.js';
import { analyticsRoutes } from './routes/analytics.js';
import { auditRoutes } from './routes/audit.js';
import { authRoutes } from './routes/auth.js';
import { dispatchRoutes } from './routes/dispatch.js';
import { operationsRoutes } from './routes/operations.js';
import { quotasRoutes } from './routes/quotas.js';
import { recurringRoutes } from './routes/recurring.js';
import { retentionRoutes } from './routes/retention.js';
import { rulesRoutes } from './routes/rules.js';
import { rulesCoverageRoutes } from './routes/rules-coverage.js';
import { eventsRoutes } from './routes/events.js';
import { groupsRoutes } from './routes/groups.js';

export interface ApiDeps {
  runtime: Pick<Runtime, 'config' | 'clock' | 'logger' | 'metrics' | 'state' | 'gateway' | 'rules' | 'quotas' | 'retention' | 'audit' | 'stateMachines' | 'recurring' | 'grouping'>;
  readiness: Readiness;
  version?: string;
}

const MAX_REQUEST_ID = 128;

/**
 * Builds the HTTP API (not listening). Routes are thin: check access, validate, call the gateway,
 * serialize. Throws (CredentialsError) when auth is enabled and its credentials file is unusable.
 */
export async function buildApiApp(deps: ApiDeps): Promise<FastifyInstance> {
  const { runtime, readiness } = deps;
  const { config, logger, metrics } = runtime;
  const maxBodyBytes = config.server.max_body_bytes;
  const auth = await loadAuth(config.auth, { state: runtime.state, logger: logger.child({ component: 'auth' }), clock: runtime.clock });
  const rateLimiter = new RateLimiter({
    config: config.rate_limit,
    state: runtime.state,
    clock: runtime.clock,
    onLimited: (scope) => metrics.rateLimited.inc({ scope }),
  });
  const app = Fastify({
    // pino's Logger carries extra generics; Fastify only needs its base logger shape.
    loggerInstance: logger as FastifyBaseLogger,
    // Our onResponse hook writes the one line per request (request-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: maxBodyBytes,
    requestTimeout: config.server.request_timeout_seconds * 1000,
    return503OnClosing: true,
    // Honour a caller's request id (bounded) so one id follows a request through the load balancer.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && given.length > 0 && given.length <= MAX_REQUEST_ID ? given : randomUUID();
    },
  });
  app.addHook('onClose', async () => auth?.close());
  installValidation(app);
  installErrorHandling(app, { maxBodyBytes });
  installRequestLog(app, metrics);
  installAccessControl(app, { authenticator: auth?.authenticator ?? null, rateLimiter });
  // While draining, close each connection after its response: otherwise a client's idle
  // keep-alive socket would hold the shutdown open until its keep-alive timeout.
  app.addHook('onSend', async (_request, reply) => {
    if (readiness.draining) reply.header('connection', 'close');
  });
  await installOpenApi(app, deps.version ?? '0.1.0');
  await app.register(operationsRoutes, { metrics, readiness });
  await app.register(authRoutes, { authenticator: auth?.authenticator ?? null });
  await app.register(dispatchRoutes, { gateway: runtime.gateway, rateLimiter });
  await app.register(rulesRoutes, { rules: runtime.rules, clock: runtime.clock });
  await app.register(quotasRoutes, { quotas: runtime.quotas });
  await app.register(retentionRoutes, { retention: runtime.retention });
  await app.register(recurringRoutes, { recurring: runtime.recurring });
  await app.register(auditRoutes, { store: runtime.audit.store, compliance: runtime.audit.compliance, gateway: runtime.gateway });
  await app.register(analyticsRoutes, { analytics: runtime.audit.analytics, clock: runtime.clock });
  await app.register(rulesCoverageRoutes, { coverage: runtime.audit.coverage, rules: runtime.rules, clock: runtime.clock });
  await app.register(eventsRoutes, { stateMachines: runtime.stateMachines });
  await app.register(groupsRoutes, { grouping: runtime.grouping });
  return app;
}
