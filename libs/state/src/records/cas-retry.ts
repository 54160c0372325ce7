import { setTimeout as sleep } from 'node:timers/promises';
import { errors } from '@sluice/core';

/** Returned by a compare-and-swap round whose version moved: read again and decide again. */
export const RETRY: unique symbol = Symbol('retry');

export interface CasRetryOptions<T> {
  /** What is contended ("quota policy p"), for the 409 thrown when every round is lost. */
  what: string;
  /** Rounds before giving up (default 8). Each is one read, one decision and one compare-and-swap. */
  attempts?: number;
  /** Instead of the 409: the result of a round-limited loss (or another error to throw). */
  onExhausted?: () => T;
}

const DEFAULT_ATTEMPTS = 8;
/** Lost rounds after which each retry first waits a few ms, with jitter, so a crowd of writers spreads out. */
const BACKOFF_AFTER = 3;
const MAX_BACKOFF_MS = 25;

/**
 * The one compare-and-swap retry loop: runs `round` (read, decide, compare-and-swap) until it
 * returns something other than RETRY, at most `attempts` times. Errors thrown by a round end
 * the loop. The backoff waits on real time on purpose: it spreads real contention, and never
 * stands for time that a test would need to control.
 */
export async function retryCas<T>(opts: CasRetryOptions<T>, round: (attempt: number) => Promise<T | typeof RETRY>): Promise<T> {
  const attempts = opts.attempts ?? DEFAULT_ATTEMPTS;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const result = await round(attempt);
    if (result !== RETRY) return result;
    if (attempt > BACKOFF_AFTER && attempt < attempts) await sleep(Math.random() * Math.min(MAX_BACKOFF_MS, 2 ** (attempt - BACKOFF_AFTER)));
  }
  if (opts.onExhausted) return opts.onExhausted();
  throw errors.conflict(`${opts.what} is being changed concurrently; retry`);
}
