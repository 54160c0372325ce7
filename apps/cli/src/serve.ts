import { composeApi } from '@sluice/api';
import { loadConfig } from '@sluice/config';
import { Metrics, createLogger } from '@sluice/telemetry';
import { startConsumers } from '@sluice/worker';
import type { ParsedArgs } from './args.js';
import { checkDeployment } from './deployment-guard.js';
import { onShutdownSignal } from './shutdown.js';

/** `sluice serve`: the API, plus the background consumers unless --no-worker. */
export async function serve(args: ParsedArgs): Promise<void> {
  const { config, file } = loadConfig({ file: args.config, overrides: { 'server.port': args.port, 'server.host': args.host } });
  const logger = createLogger({ level: config.logging.level, role: args.noWorker ? 'api' : 'serve' });
  checkDeployment({ command: 'serve', backend: config.state.backend, noWorker: args.noWorker, logger });
  const api = await composeApi(config, { logger, metrics: new Metrics() });
  if (!args.noWorker) await startConsumers(api.runtime);
  const timing = { timeoutMs: config.server.shutdown_timeout_seconds * 1000, drainDelayMs: config.server.drain_delay_seconds * 1000 };
  onShutdownSignal(logger, timing, (drainDelayMs) => api.close({ drainDelayMs }));
  const address = await api.app.listen({ port: config.server.port, host: config.server.host });
  logger.info(
    { address, config_file: file ?? null, backend: config.state.backend, worker: !args.noWorker, providers: api.runtime.providers.names() },
    'sluice listening',
  );
}
