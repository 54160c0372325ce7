import type { Runtime } from '@sluice/gateway';
import { edgeErrorOptions, installErrorHandling, operationsRoutes, type Readiness } from '@sluice/http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';

/** The worker's own small HTTP server: /health, /ready and /metrics for probes and Prometheus. */
export async function buildWorkerHealthServer(runtime: Pick<Runtime, 'logger' | 'metrics'>, readiness: Readiness): Promise<FastifyInstance> {
  // Probes and scrapes hold no work worth waiting for: close their keep-alive sockets at once on shutdown.
  const app = Fastify({
    loggerInstance: runtime.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: true,
    ...edgeErrorOptions,
  });
  installErrorHandling(app, { maxBodyBytes: 1024 });
  await app.register(operationsRoutes, { metrics: runtime.metrics, readiness });
  return app;
}
