import { composeApi } from '@sluice/api';
import { Metrics, createLogger, type Tracing } from '@sluice/telemetry';
import { startConsumers } from '@sluice/worker';
import type { ParsedArgs } from './args.js';
import { warnMisspeltEnv, type CommandConfig } from './command-setup.js';
import { checkDeployment } from './deployment-guard.js';
import { exitOnSignalDuringStartup, logStartFailure, onShutdownSignal } from './shutdown.js';

/** `sluice serve`: the API, plus the background consumers unless --no-worker. */
export async function serve(args: ParsedArgs, { config, file, envMisspelt }: CommandConfig, tracing: Tracing | null): Promise<void> {
  const logger = createLogger({ level: config.logging.level, role: args.noWorker ? 'api' : 'serve', traceIds: tracing !== null });
  tracing?.reportTo((detail, msg) => logger.warn(detail, msg));
  checkDeployment({ command: 'serve', backend: config.state.backend, noWorker: args.noWorker, logger });
  warnMisspeltEnv(logger, envMisspelt);
  const starting = exitOnSignalDuringStartup(logger);
  await logStartFailure(logger, async () => {
    const api = await composeApi(config, { logger, metrics: new Metrics(), tracing });
    if (!args.noWorker) await startConsumers(api.runtime);
    const timing = { timeoutMs: config.server.shutdown_timeout_seconds * 1000, drainDelayMs: config.server.drain_delay_seconds * 1000 };
    starting();
    onShutdownSignal(logger, timing, async (drainDelayMs) => {
      try {
        await api.close({ drainDelayMs });
      } finally {
        await tracing?.shutdown(); // the spans of a failed close say why
      }
    });
    const address = await api.app.listen({ port: config.server.port, host: config.server.host });
    logger.info(
      {
        address,
        config_file: file ?? null,
        backend: config.state.backend,
        worker: !args.noWorker,
        providers: api.runtime.providers.names(),
        tracing: tracing !== null,
      },
      'sluice listening',
    );
  });
}
