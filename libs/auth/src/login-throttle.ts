import { errors, type Clock, Semaphore, type Release } from '@sluice/core';
import { GLOBAL_SCOPE, type StateKey, type StateStore } from '@sluice/state';

export interface LoginThrottleSettings {
  /** Unsuccessful logins of one username a window may hold; the next is refused until it ends. */
  max_attempts: number;
  window_seconds: number;
}

/*
 * A password check runs in libuv's thread pool (4 threads by default), which the process shares
 * with DNS lookups (every outbound call), file reads and compression. Two checks at a time leave
 * the rest free whatever a login flood sends; a short queue absorbs a burst of real users.
 */
const CHECKS_AT_ONCE = 2;
const CHECKS_WAITING = 32;

/**
 * Guards password logins on two levels. Per username, shared by every replica: each attempt is
 * counted in a fixed window before its password is checked (one atomic step, so racing replicas
 * cannot let more through), and a successful login clears the count; once the window holds
 * `max_attempts`, attempts are refused with 429 until it ends, whatever the password. Per
 * replica: at most CHECKS_AT_ONCE password checks run and CHECKS_WAITING wait; more are refused
 * with 429 at once. Unknown usernames are counted like known ones, so a 429 reveals nothing.
 */
export class LoginThrottle {
  readonly #checks = new Semaphore(CHECKS_AT_ONCE);

  constructor(
    private readonly state: StateStore,
    private readonly clock: Clock,
    private readonly settings: LoginThrottleSettings,
  ) {}

  /** Runs `check` (the password check) for `username` within both limits. */
  async guard<T>(username: string, check: () => Promise<T>): Promise<T> {
    const release = await this.#permit();
    try {
      await this.#count(username);
      return await check();
    } finally {
      release();
    }
  }

  /** A successful login starts its username afresh. */
  async succeeded(username: string): Promise<void> {
    await this.state.delete(attemptsKey(username));
  }

  #permit(): Promise<Release> {
    const free = this.#checks.tryAcquire();
    if (free !== undefined) return Promise.resolve(free);
    if (this.#checks.waiting >= CHECKS_WAITING) throw errors.rateLimited(1);
    return this.#checks.acquire();
  }

  async #count(username: string): Promise<void> {
    const { max_attempts, window_seconds } = this.settings;
    const window = await this.state.incrementWindow(attemptsKey(username), { windowMs: window_seconds * 1000, limit: max_attempts });
    if (!window.allowed) throw errors.rateLimited(Math.max(1, Math.ceil((window.resetAtMs - this.clock.now()) / 1000)));
  }
}

function attemptsKey(username: string): StateKey {
  return { kind: 'login-attempts', ...GLOBAL_SCOPE, id: username };
}
