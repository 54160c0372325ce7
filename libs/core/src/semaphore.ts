/** Releases a permit; calling it more than once is harmless. */
export type Release = () => void;

interface Waiter {
  grant: (release: Release) => void;
}

/** A counting semaphore whose waiters are served first come, first served. */
export class Semaphore {
  #available: number;
  #inUse = 0;
  readonly #queue: Waiter[] = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`semaphore size must be a positive integer, got ${size}`);
    this.#available = size;
  }

  /** Permits currently held. */
  get inUse(): number {
    return this.#inUse;
  }

  /** Callers waiting for a permit. */
  get waiting(): number {
    return this.#queue.length;
  }

  /** A permit right now, or undefined when none is free (then use acquire to queue); never jumps the queue. */
  tryAcquire(): Release | undefined {
    if (this.#available === 0) return undefined;
    this.#available--;
    return this.#permit();
  }

  /** Resolves with a release function once a permit is free; rejects with the signal's reason if aborted first. */
  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#available > 0) {
      this.#available--;
      return Promise.resolve(this.#permit());
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = (): void => {
        const i = this.#queue.indexOf(waiter);
        if (i >= 0) this.#queue.splice(i, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  #permit(): Release {
    this.#inUse++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inUse--;
      // Hand the permit straight to the next waiter so a newcomer cannot jump the queue.
      const next = this.#queue.shift();
      if (next) next.grant(this.#permit());
      else this.#available++;
    };
  }
}
