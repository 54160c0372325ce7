import { loadConfig } from '@sluice/config';
import { createRuntime } from '@sluice/gateway';
import { Metrics, createLogger } from '@sluice/telemetry';
import { Readiness, buildWorkerHealthServer, startWorker } from '@sluice/worker';
import type { ParsedArgs } from './args.js';
import { checkDeployment } from './deployment-guard.js';
import { onShutdownSignal } from './shutdown.js';

/** `sluice worker`: only the background consumers (BullMQ), plus a small health/metrics server. */
export async function worker(args: ParsedArgs): Promise<void> {
  const { config } = loadConfig({ file: args.config, overrides: { 'worker.port': args.port, 'worker.host': args.host } });
  const logger = createLogger({ level: config.logging.level, role: 'worker' });
  checkDeployment({ command: 'worker', backend: config.state.backend, noWorker: false, logger });
  const metrics = new Metrics();
  const runtime = await createRuntime(config, { logger, metrics });
  const readiness = new Readiness(() => runtime.state.ping());
  const health = await buildWorkerHealthServer(runtime, readiness);
  const kinds = await startWorker(runtime);
  onShutdownSignal(logger, config.server.shutdown_timeout_seconds * 1000, async () => {
    readiness.startDraining();
    await runtime.close();
    await health.close();
  });
  const address = await health.listen({ port: config.worker.port, host: config.worker.host });
  logger.info({ address, kinds }, 'sluice worker running');
}
