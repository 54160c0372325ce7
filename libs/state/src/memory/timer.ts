/** Node clamps setTimeout delays above 2^31-1 ms (~24.8 days) to 1 ms; longer waits re-arm in steps. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export interface TimerHandle {
  cancel(): void;
}

/**
 * Calls `fn` once the wall clock reaches `at` (epoch ms). Unref'd: memory mode runs inside a
 * server that stays up anyway, and a pending job must not keep a finished CLI or test alive.
 */
export function runAt(at: number, fn: () => void): TimerHandle {
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    const wait = at - Date.now();
    if (wait > MAX_TIMEOUT_MS) {
      timer = setTimeout(arm, MAX_TIMEOUT_MS);
    } else {
      timer = setTimeout(fn, Math.max(0, wait));
    }
    timer.unref();
  };
  arm();
  return { cancel: () => clearTimeout(timer) };
}
