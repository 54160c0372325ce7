import { randomUUID } from 'node:crypto';
import { loadAuth } from '@sluice/auth';
import type { Runtime } from '@sluice/gateway';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync, type FastifyPluginCallback } from 'fastify';
import { errors } from '@sluice/core';
import { edgeErrorOptions, installCharsetCheck, installErrorHandling, installJsonDepthLimit, operationsRoutes, sendError, type Readiness } from '@sluice/http';
import { installAccessControl } from './plugins/access-control.js';
import { installErrorResponses } from './plugins/error-responses.js';
import { installAdminUi } from './plugins/admin-ui.js';
import { installOpenApi } from './plugins/openapi.js';
import { installOperationIds } from './plugins/operation-ids.js';
import { installBrowserGuards } from './plugins/browser-guards.js';
import { installStrictInputs } from './plugins/strict-inputs.js';
import { alertmanagerRoutes } from './routes/alertmanager.js';
import { alertmanagerSilencesRoutes } from './routes/alertmanager-silences.js';
import { lazyRequestLogger } from './plugins/lazy-request-logger.js';
import { installRequestLog } from './plugins/request-log.js';
import { installResponseCheck } from './plugins/response-check.js';
import { installValidation } from './plugins/validation.js';
import { RateLimiter } from './rate-limiter.js';
import { authRoutes } from './routes/auth.js';
import { dispatchRoutes } from './routes/dispatch.js';
import { FEATURE_ROUTES, type RoutesRuntime } from './routes/feature-routes.js';

export interface ApiDeps {
  runtime: RoutesRuntime & Pick<Runtime, 'config' | 'logger' | 'metrics' | 'state'>;
  readiness: Readiness;
  /** With tracing on: @fastify/otel's plugin, registered before every route (the request spans). */
  tracingPlugin?: FastifyPluginCallback | FastifyPluginAsync;
  version?: string;
  /** Tests: check every response against its documented schema (response-check.ts). */
  checkResponses?: boolean;
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
    // request.log becomes pino's child only when a request logs through it.
    childLoggerFactory: lazyRequestLogger,
    // Our onResponse hook writes the one line per request (request-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: maxBodyBytes,
    requestTimeout: config.server.request_timeout_seconds * 1000,
    http: receiveTimeouts(config.server.request_timeout_seconds * 1000),
    // Path ids may be 256 characters, each up to 3 when percent-encoded; the route schemas bound them exactly.
    routerOptions: { maxParamLength: 1024 },
    // Our own 503 (below): Fastify's has no `code`.
    return503OnClosing: false,
    // A bad URL, an over-long path parameter, a request Node's parser refuses: our error body, not Fastify's or Node's.
    ...edgeErrorOptions,
    // Honour a caller's request id (bounded) so one id follows a request through the load balancer.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && given.length > 0 && given.length <= MAX_REQUEST_ID ? given : randomUUID();
    },
  });
  if (deps.tracingPlugin) await app.register(deps.tracingPlugin);
  app.addHook('onClose', async () => auth?.close());
  // Once the listener is closing, a request that still arrives on a kept-alive connection is
  // refused (the client retries elsewhere); /health and in-flight requests are unaffected.
  // Callback hooks, here and below: an async hook costs a promise and a microtask per request.
  app.addHook('onRequest', (request, reply, done) => {
    if (readiness.closing && request.routeOptions.url !== '/health') sendError(reply, errors.notReady('shutting down'));
    else done();
  });
  installBrowserGuards(app);
  installValidation(app);
  if (deps.checkResponses) installResponseCheck(app);
  installJsonDepthLimit(app, config.server.max_json_depth);
  installCharsetCheck(app);
  // Each request refused because the state backend is away or full is a failed state operation.
  const errorHandling = { maxBodyBytes, onStateUnavailable: () => metrics.stateErrors.inc({ operation: 'request' }) };
  installErrorHandling(app, errorHandling);
  installRequestLog(app, metrics);
  installAccessControl(app, { authenticator: auth?.authenticator ?? null, rateLimiter });
  // Before the error responses: the query schema it gives a read that names none documents its 400.
  installStrictInputs(app);
  installErrorResponses(app);
  installOperationIds(app);
  // While draining, close each connection after its response: otherwise a client's idle
  // keep-alive socket would hold the shutdown open until its keep-alive timeout.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (readiness.draining) reply.header('connection', 'close');
    done(null, payload);
  });
  const version = deps.version ?? '0.1.0';
  await installOpenApi(app, version);
  await app.register(operationsRoutes, { metrics, readiness });
  await app.register(authRoutes, { authenticator: auth?.authenticator ?? null });
  await app.register(dispatchRoutes, { gateway: runtime.gateway, rateLimiter });
  const alertmanager = { clock: runtime.clock, config: config.alertmanager, errorHandling };
  await app.register(alertmanagerRoutes, { ...alertmanager, gateway: runtime.gateway, rateLimiter });
  await app.register(alertmanagerSilencesRoutes, { ...alertmanager, silences: runtime.silences, version });
  for (const registers of Object.values(FEATURE_ROUTES)) {
    for (const register of registers) await register(app, runtime, { rateLimiter });
  }
  if (config.server.ui) await installAdminUi(app);
  return app;
}

/**
 * Node's own request timeout, made to hold: it is checked only every `connectionsCheckingInterval`
 * (30 s by default), and a body that stalls after complete headers escaped it until
 * `headersTimeout` (60 s) had passed too — a 2 s setting answered a stalled body after 88 s. So
 * the check runs at a tenth of the timeout (0.25–5 s) and the headers' limit is never above it.
 */
function receiveTimeouts(requestTimeoutMs: number): { connectionsCheckingInterval: number; headersTimeout: number; requestTimeout: number } | undefined {
  if (requestTimeoutMs === 0) return undefined;
  return {
    connectionsCheckingInterval: Math.min(5000, Math.max(250, requestTimeoutMs / 10)),
    headersTimeout: Math.min(60_000, requestTimeoutMs),
    requestTimeout: requestTimeoutMs,
  };
}
