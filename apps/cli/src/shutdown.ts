import type { Logger } from '@sluice/telemetry';

/**
 * SIGTERM/SIGINT: run `stop` once (stop accepting, finish in-flight work, close Redis). If it has
 * not finished within the timeout the process exits anyway, non-zero, so an orchestrator never
 * waits forever on a stuck drain.
 */
export function onShutdownSignal(logger: Logger, timeoutMs: number, stop: () => Promise<void>): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, timeout_ms: timeoutMs }, 'shutting down');
    const force = setTimeout(() => {
      logger.error({ timeout_ms: timeoutMs }, 'shutdown timed out; exiting');
      process.exit(1);
    }, timeoutMs);
    force.unref();
    stop().then(
      () => {
        logger.info('shutdown complete');
        logger.flush();
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', handle);
  process.once('SIGINT', handle);
}
