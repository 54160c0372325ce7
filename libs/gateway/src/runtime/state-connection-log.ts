import type { StateStore } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';

/**
 * One `warn` line when the connection to the state backend is lost and one `info` line when it is
 * back, with how long it was down, in every process: the requests refused meanwhile say only that
 * the backend is unavailable, once per reason. Returns the unsubscribe (before closing the store,
 * whose own close would read as a loss).
 */
export function logStateConnection(state: StateStore, logger: Logger, now: () => number = Date.now): () => void {
  const log = logger.child({ component: 'state' });
  let lostAt: number | null = null;
  const offLost = state.onConnectionLost((cause, address) => {
    lostAt = now();
    log.warn({ reason: cause instanceof Error ? cause.message : 'connection closed', ...(address !== undefined && { address }) }, 'state backend unreachable');
  });
  const offBack = state.onReconnected(() => {
    log.info({ down_ms: lostAt === null ? null : now() - lostAt }, 'state backend reachable again');
    lostAt = null;
  });
  return () => {
    offLost();
    offBack();
  };
}
