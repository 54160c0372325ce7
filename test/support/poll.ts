import { setTimeout as sleep } from 'node:timers/promises';

export interface PollOptions {
  /** Give up after this long (default 10 s): generous, because a passing poll returns at once. */
  timeoutMs?: number;
  /** Pause between reads (default 20 ms); raise it when a read is costly (HTTP, a cluster). */
  intervalMs?: number;
}

/**
 * The one way tests wait for something that happens on its own (a job run, a reload, a replica
 * catching up): reads `read` until `done` accepts its value and returns that value, or throws
 * after the timeout naming `what` and the last value read. Without `done`, any truthy value ends
 * the wait. Plain Node (no vitest), so global setup and process helpers use it too; inside a
 * test, `expect.poll` does the same when the wait is one matcher.
 *
 * Waiting is not proof of timing: where the code under test takes a Clock, move a ManualClock
 * instead; on real time, assert on recorded timestamps.
 */
export function poll<T>(what: string, read: () => T | Promise<T>, opts?: PollOptions): Promise<T>;
export function poll<T>(what: string, read: () => T | Promise<T>, done: (value: T) => boolean, opts?: PollOptions): Promise<T>;
export async function poll<T>(
  what: string,
  read: () => T | Promise<T>,
  doneOrOpts?: ((value: T) => boolean) | PollOptions,
  maybeOpts: PollOptions = {},
): Promise<T> {
  const done = typeof doneOrOpts === 'function' ? doneOrOpts : Boolean;
  const { timeoutMs = 10_000, intervalMs = 20 } = typeof doneOrOpts === 'object' ? doneOrOpts : maybeOpts;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last value: ${describe(value)}`);
    await sleep(intervalMs);
  }
}

function describe(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 500 ? `${text.slice(0, 500)}…` : text;
  } catch {
    return String(value);
  }
}
