import { loadConfig } from '@sluice/config';
import { Metrics, createLogger } from '@sluice/telemetry';
import { composeWorker } from '@sluice/worker';
import type { ParsedArgs } from './args.js';
import { checkDeployment } from './deployment-guard.js';
import { onShutdownSignal } from './shutdown.js';

/** `sluice worker`: only the background consumers (BullMQ), plus a small health/metrics server. */
export async function worker(args: ParsedArgs): Promise<void> {
  const { config } = loadConfig({ file: args.config, overrides: { 'worker.port': args.port, 'worker.host': args.host } });
  const logger = createLogger({ level: config.logging.level, role: 'worker' });
  checkDeployment({ command: 'worker', backend: config.state.backend, noWorker: false, logger });
  const worker = await composeWorker(config, { logger, metrics: new Metrics() });
  // No load balancer routes to a worker: nothing to drain before closing.
  onShutdownSignal(logger, { timeoutMs: config.server.shutdown_timeout_seconds * 1000, drainDelayMs: 0 }, () => worker.close());
  const address = await worker.health.listen({ port: config.worker.port, host: config.worker.host });
  logger.info({ address, kinds: worker.kinds }, 'sluice worker running');
}
