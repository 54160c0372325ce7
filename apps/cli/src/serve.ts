import { buildApiApp, Readiness } from '@sluice/api';
import { loadConfig } from '@sluice/config';
import { createRuntime } from '@sluice/gateway';
import { Metrics, createLogger } from '@sluice/telemetry';
import { startWorker } from '@sluice/worker';
import type { ParsedArgs } from './args.js';
import { checkDeployment } from './deployment-guard.js';
import { onShutdownSignal } from './shutdown.js';

/** `sluice serve`: the API, plus the background consumers unless --no-worker. */
export async function serve(args: ParsedArgs): Promise<void> {
  const { config, file } = loadConfig({ file: args.config, overrides: { 'server.port': args.port, 'server.host': args.host } });
  const logger = createLogger({ level: config.logging.level, role: args.noWorker ? 'api' : 'serve' });
  checkDeployment({ command: 'serve', backend: config.state.backend, noWorker: args.noWorker, logger });
  const metrics = new Metrics();
  const runtime = await createRuntime(config, { logger, metrics });
  const readiness = new Readiness(() => runtime.state.ping());
  const app = await buildApiApp({ runtime, readiness });
  if (!args.noWorker) await startWorker(runtime);
  onShutdownSignal(logger, config.server.shutdown_timeout_seconds * 1000, async () => {
    readiness.startDraining();
    await app.close();
    await runtime.close();
  });
  const address = await app.listen({ port: config.server.port, host: config.server.host });
  logger.info(
    { address, config_file: file ?? null, backend: config.state.backend, worker: !args.noWorker, providers: runtime.providers.names() },
    'sluice listening',
  );
}
