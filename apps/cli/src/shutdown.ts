import type { Logger } from '@sluice/telemetry';
import { whenParentExits } from './parent-watch.js';

export interface ShutdownTiming {
  /** How long the drain itself may take before the process exits 1. */
  timeoutMs: number;
  /** SIGTERM only: how long to keep serving with /ready at 503 first (server.drain_delay_seconds). */
  drainDelayMs: number;
}

/** The signals that stop the process: an orchestrator's, Ctrl-C's, a closed terminal's. */
const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/**
 * SIGTERM/SIGINT/SIGHUP, or under npm its process going away (parent-watch.ts): run `stop` once
 * (stop accepting, finish in-flight work, close Redis). SIGTERM — what an orchestrator sends —
 * first keeps serving for the drain delay so load balancers notice /ready; Ctrl-C, a closed
 * terminal (SIGHUP: there is no configuration reload to mean) and a vanished parent skip it. If
 * the drain has not finished within delay + timeout the process exits anyway, non-zero, so an
 * orchestrator never waits forever on a stuck drain.
 */
export function onShutdownSignal(logger: Logger, timing: ShutdownTiming, stop: (drainDelayMs: number) => Promise<void>): void {
  let stopping = false;
  const handle = (why: { signal: NodeJS.Signals } | { reason: string }) => {
    if (stopping) {
      // One Ctrl-C under npm arrives twice (the terminal's and npm's); an impatient second
      // SIGTERM is no reason to reset the connections the drain is finishing. The timeout bounds it.
      logger.info(why, 'already shutting down');
      return;
    }
    stopping = true;
    const drainDelayMs = 'signal' in why && why.signal === 'SIGTERM' ? timing.drainDelayMs : 0;
    const timeoutMs = drainDelayMs + timing.timeoutMs;
    logger.info({ ...why, drain_delay_ms: drainDelayMs, timeout_ms: timeoutMs }, 'shutting down');
    const force = setTimeout(() => {
      logger.error({ timeout_ms: timeoutMs }, 'shutdown timed out; exiting');
      process.exit(1);
    }, timeoutMs);
    force.unref();
    stop(drainDelayMs).then(
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
  // Node's default for each is to die at once (SIGHUP too): in-flight requests reset, nothing
  // logged. So the handlers stay for the whole shutdown, a repeated signal included.
  for (const signal of SIGNALS) process.on(signal, () => handle({ signal }));
  whenParentExits(() => handle({ reason: 'parent process exited' }));
}

/**
 * Until onShutdownSignal takes over: a signal while the process is still starting (waiting for
 * Redis, say) ends it at once, exit 0 and logged — nothing was acknowledged yet, nothing runs —
 * instead of Node's default death by signal (exit 143, not a word). Returns the disarm.
 */
export function exitOnSignalDuringStartup(logger: Logger): () => void {
  const handle = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'shutting down before start-up finished');
    logger.flush();
    process.exit(0);
  };
  for (const signal of SIGNALS) process.once(signal, handle);
  logger.info('starting');
  return () => {
    for (const signal of SIGNALS) process.off(signal, handle);
  };
}

/**
 * Runs a command's start-up; a failure (Redis unreachable, a port taken) is logged as a JSON
 * `fatal` line, where a log pipeline sees it, before it ends the process (the launcher writes it
 * to stderr too). The message names no secret: connection errors mask passwords.
 */
export async function logStartFailure<T>(logger: Logger, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    logger.fatal({ reason: err instanceof Error ? err.message : String(err) }, 'start failed');
    throw err;
  }
}
