import { setTimeout as delay } from 'node:timers/promises';
import { type Action, type FailureInfo, type ProviderResponse, type Release, Semaphore } from '@sluice/core';
import { ProviderError, type Provider, type ProviderMetricsSink } from './provider.js';

export type ExecutionResult = { ok: true; response: ProviderResponse; attempts: number } | { ok: false; error: FailureInfo };

export interface ExecutorOptions {
  /** Retries after the first attempt; only retryable errors are retried. */
  maxRetries: number;
  /** Per-attempt limit; the attempt's signal is aborted when it passes. */
  timeoutMs: number;
  /** Attempts running at once across all providers; holders are attempts, not backoff sleeps. */
  maxConcurrent: number;
  /**
   * Attempts one provider (by name) may run at once, within maxConcurrent: a slow provider then
   * queues its own calls instead of taking every permit from the others. Unnamed providers are
   * capped by maxConcurrent alone; in-process providers (noop, log) are never capped.
   */
  providerConcurrency?: ReadonlyMap<string, number>;
  backoffBaseMs: number;
  backoffMaxMs: number;
  metrics?: ProviderMetricsSink;
  /** Injected in tests; must reject when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Injected in tests; a number in [0, 1). */
  random?: () => number;
}

/** The config file's executor section, structurally (this package does not import @sluice/config). */
export interface ExecutorSettings {
  max_retries: number;
  timeout_seconds: number;
  max_concurrent: number;
  backoff_base_ms: number;
  backoff_max_ms: number;
}

type AttemptResult = { ok: true; response: ProviderResponse } | { ok: false; error: ProviderError };

/** Runs actions through providers with retries, full-jitter exponential backoff, timeouts and a concurrency cap. */
export class Executor {
  readonly #opts: ExecutorOptions;
  readonly #semaphore: Semaphore;
  /** Each provider's own cap; null where it cannot bind (at least maxConcurrent: the shared permits already do). */
  readonly #perProvider = new Map<string, Semaphore | null>();
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #random: () => number;

  constructor(opts: ExecutorOptions) {
    if (!Number.isInteger(opts.maxRetries) || opts.maxRetries < 0) throw new RangeError('maxRetries must be an integer >= 0');
    if (!(opts.timeoutMs > 0)) throw new RangeError('timeoutMs must be > 0');
    this.#opts = opts;
    this.#semaphore = new Semaphore(opts.maxConcurrent);
    this.#sleep = opts.sleep ?? ((ms, signal) => delay(ms, undefined, signal === undefined ? {} : { signal }));
    this.#random = opts.random ?? Math.random;
  }

  static fromSettings(s: ExecutorSettings, extra: Pick<ExecutorOptions, 'metrics' | 'sleep' | 'random'> = {}): Executor {
    return new Executor({
      maxRetries: s.max_retries,
      timeoutMs: s.timeout_seconds * 1000,
      maxConcurrent: s.max_concurrent,
      backoffBaseMs: s.backoff_base_ms,
      backoffMaxMs: s.backoff_max_ms,
      ...extra,
    });
  }

  /** Attempts running right now. */
  get inFlight(): number {
    return this.#semaphore.inUse;
  }

  /** Attempts waiting for a concurrency permit. */
  get queued(): number {
    return this.#semaphore.waiting;
  }

  /** Full jitter: uniform in [0, min(max, base * 2^(attempt-1))). `attempt` is the one that just failed. */
  backoffDelay(attempt: number): number {
    const ceiling = Math.min(this.#opts.backoffMaxMs, this.#opts.backoffBaseMs * 2 ** (attempt - 1));
    return this.#random() * ceiling;
  }

  async execute(provider: Provider, action: Action, opts: { signal?: AbortSignal } = {}): Promise<ExecutionResult> {
    const { signal } = opts;
    const maxAttempts = 1 + this.#opts.maxRetries;
    for (let attempt = 1; ; attempt++) {
      let result: AttemptResult;
      try {
        result = await this.#attempt(provider, action, attempt, signal);
      } catch {
        return aborted(signal, attempt - 1); // only the permit wait rejects, and only on abort
      }
      if (result.ok) return { ok: true, response: result.response, attempts: attempt };
      if (signal?.aborted) return aborted(signal, attempt);
      const err = result.error;
      if (!err.retryable || attempt >= maxAttempts) return failure(err, attempt);
      const wait = this.#nextDelay(attempt, err);
      if (wait === undefined) {
        return failure(err, attempt, `; Retry-After of ${err.retryAfterMs} ms exceeds backoff_max_ms, not retried`);
      }
      try {
        await this.#sleep(wait, signal);
      } catch {
        return aborted(signal, attempt);
      }
      if (signal?.aborted) return aborted(signal, attempt);
    }
  }

  /** Backoff, raised to the upstream's Retry-After; undefined when that is longer than we are willing to wait. */
  #nextDelay(attempt: number, err: ProviderError): number | undefined {
    const backoff = this.backoffDelay(attempt);
    if (err.retryAfterMs === undefined) return backoff;
    if (err.retryAfterMs > this.#opts.backoffMaxMs) return undefined;
    return Math.max(backoff, err.retryAfterMs);
  }

  /** A free permit of `semaphore` without going through a promise; undefined when the caller must wait (or has aborted: acquire rejects). */
  #freePermit(semaphore: Semaphore, outer: AbortSignal | undefined): Release | undefined {
    return outer?.aborted === true ? undefined : semaphore.tryAcquire();
  }

  /** The provider's own cap on attempts at once (made on first use); null when it cannot bind. */
  #providerSemaphore(name: string): Semaphore | null {
    let semaphore = this.#perProvider.get(name);
    if (semaphore === undefined) {
      const size = this.#opts.providerConcurrency?.get(name) ?? this.#opts.maxConcurrent;
      semaphore = size < this.#opts.maxConcurrent ? new Semaphore(size) : null;
      this.#perProvider.set(name, semaphore);
    }
    return semaphore;
  }

  /**
   * One attempt, holding a permit throughout; rejects only if `outer` aborts while waiting for a
   * permit. A network provider takes its own permit first, then a shared one: its waiters queue
   * behind each other, not in front of other providers' calls.
   */
  #attempt(provider: Provider, action: Action, attempt: number, outer: AbortSignal | undefined): Promise<AttemptResult> {
    // Not async: an uncapped call (in-process, or a provider whose cap cannot bind) goes straight on, without a promise and ticks of its own.
    const own = provider.inProcess === true ? null : this.#providerSemaphore(provider.name);
    return own === null ? this.#permitted(provider, action, attempt, outer) : this.#capped(own, provider, action, attempt, outer);
  }

  async #capped(own: Semaphore, provider: Provider, action: Action, attempt: number, outer: AbortSignal | undefined): Promise<AttemptResult> {
    const releaseOwn = this.#freePermit(own, outer) ?? (await own.acquire(outer));
    try {
      return await this.#permitted(provider, action, attempt, outer);
    } finally {
      releaseOwn();
    }
  }

  /** The attempt once it holds a shared permit (taken here). */
  async #permitted(provider: Provider, action: Action, attempt: number, outer: AbortSignal | undefined): Promise<AttemptResult> {
    const release = this.#freePermit(this.#semaphore, outer) ?? (await this.#semaphore.acquire(outer));
    if (provider.inProcess === true) {
      // Settles without I/O or timers, so its timeout could never fire first: no AbortController or
      // timer is made (they were most of a noop dispatch's executor cost).
      try {
        return await this.#observed(provider, NEVER_ABORTED, () => {
          const work = provider.execute(action, { signal: outer ?? NEVER_ABORTED, attempt });
          return outer === undefined ? work : untilAborted(work, outer);
        });
      } finally {
        release();
      }
    }
    const timeout = new AbortController();
    const ms = this.#opts.timeoutMs;
    const timer = setTimeout(() => {
      timeout.abort(new ProviderError('TIMEOUT', `provider "${provider.name}" attempt ${attempt} timed out after ${ms} ms`, { retryable: true }));
    }, ms);
    const signal = outer === undefined ? timeout.signal : AbortSignal.any([timeout.signal, outer]);
    try {
      return await this.#observed(provider, timeout.signal, () => untilAborted(provider.execute(action, { signal, attempt }), signal));
    } finally {
      clearTimeout(timer);
      release();
    }
  }

  /** Runs one attempt's call, recording its duration and result; `timeout` tells a timeout from other failures. */
  async #observed(provider: Provider, timeout: AbortSignal, call: () => Promise<ProviderResponse>): Promise<AttemptResult> {
    const started = performance.now();
    try {
      const response = await call();
      this.#opts.metrics?.observe(provider.name, 'success', performance.now() - started);
      return { ok: true, response };
    } catch (err) {
      this.#opts.metrics?.observe(provider.name, 'failure', performance.now() - started);
      return { ok: false, error: toProviderError(err, timeout, provider.name) };
    }
  }
}

/** Handed to in-process providers when the caller gave no signal; shared, so they must not listen on it. */
const NEVER_ABORTED = new AbortController().signal;

/** Settles with `work`, or rejects with the signal's reason as soon as it aborts (a provider may ignore its signal). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function toProviderError(err: unknown, timeout: AbortSignal, name: string): ProviderError {
  // Our timer fired: whatever the provider threw on the way out, the attempt timed out.
  if (timeout.aborted && timeout.reason instanceof ProviderError) return timeout.reason;
  if (err instanceof ProviderError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  return new ProviderError('EXECUTION_FAILED', `provider "${name}" failed: ${detail}`, { retryable: false, cause: err });
}

function failure(err: ProviderError, attempts: number, suffix = ''): ExecutionResult {
  return { ok: false, error: { code: err.code, message: err.message + suffix, retryable: err.retryable, attempts } };
}

/** The caller gave up (shutdown, client deadline): the action's fate is unknown, so it is worth retrying. */
function aborted(signal: AbortSignal | undefined, attempts: number): ExecutionResult {
  const reason: unknown = signal?.reason;
  const isTimeout = reason instanceof Error && reason.name === 'TimeoutError';
  return {
    ok: false,
    error: {
      code: isTimeout ? 'TIMEOUT' : 'EXECUTION_FAILED',
      message: `execution aborted after ${attempts} attempt(s)${reason instanceof Error ? `: ${reason.message}` : ''}`,
      retryable: true,
      attempts,
    },
  };
}
