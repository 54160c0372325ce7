/**
 * Wraps a periodic async task so that a tick arriving while the previous run is still in flight
 * is skipped, not queued: when the store answers slower than the period (or a test clock jumps
 * days, firing every period on the way) the runs do not pile up.
 */
export function oneAtATime(task: () => Promise<void>): () => Promise<void> {
  let running = false;
  return async () => {
    if (running) return;
    running = true;
    try {
      await task();
    } finally {
      running = false;
    }
  };
}
