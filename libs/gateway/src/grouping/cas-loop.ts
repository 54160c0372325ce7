import { setTimeout as sleep } from 'node:timers/promises';
import { errors } from '@sluice/core';

/** Returned by a CAS attempt whose version moved: re-read and plan again. */
export const RETRY: unique symbol = Symbol('retry');

/** Enough for every replica appending to one hot group at once: each round, one of them wins. */
const MAX_ATTEMPTS = 200;

/**
 * Runs `attempt` (read, plan, compare-and-swap) until it returns something other than RETRY.
 * After a few lost races it waits a little, with jitter, so a crowd of writers spreads out.
 * Errors thrown by `attempt` end the loop.
 */
export async function casLoop<T>(what: string, attempt: () => Promise<T | typeof RETRY>): Promise<T> {
  for (let i = 0; i < MAX_ATTEMPTS; i++) {
    const result = await attempt();
    if (result !== RETRY) return result;
    if (i >= 3) await sleep(Math.random() * Math.min(25, 2 ** (i - 2)));
  }
  throw errors.conflict(`${what} is being changed by too many writers at once; retry`);
}
