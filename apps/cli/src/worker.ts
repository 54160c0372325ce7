import { Metrics, createLogger, type Tracing } from '@sluice/telemetry';
import { composeWorker } from '@sluice/worker';
import { warnMisspeltEnv, type CommandConfig } from './command-setup.js';
import { checkDeployment } from './deployment-guard.js';
import { exitOnSignalDuringStartup, logStartFailure, onShutdownSignal } from './shutdown.js';

/** `sluice worker`: only the background consumers (BullMQ), plus a small health/metrics server. */
export async function worker({ config, envMisspelt }: CommandConfig, tracing: Tracing | null): Promise<void> {
  const logger = createLogger({ level: config.logging.level, role: 'worker', traceIds: tracing !== null });
  tracing?.reportTo((detail, msg) => logger.warn(detail, msg));
  checkDeployment({ command: 'worker', backend: config.state.backend, noWorker: false, logger });
  warnMisspeltEnv(logger, envMisspelt);
  const starting = exitOnSignalDuringStartup(logger);
  await logStartFailure(logger, async () => {
    const worker = await composeWorker(config, { logger, metrics: new Metrics(), ...(tracing ? { tracer: tracing.tracer } : {}) });
    starting();
    // No load balancer routes to a worker: nothing to drain before closing.
    onShutdownSignal(logger, { timeoutMs: config.server.shutdown_timeout_seconds * 1000, drainDelayMs: 0 }, async () => {
      try {
        await worker.close();
      } finally {
        await tracing?.shutdown(); // the spans of a failed close say why
      }
    });
    const address = await worker.health.listen({ port: config.worker.port, host: config.worker.host });
    logger.info({ address, kinds: worker.kinds, tracing: tracing !== null }, 'sluice worker running');
  });
}
