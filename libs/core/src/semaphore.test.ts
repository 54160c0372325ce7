import { describe, expect, it } from 'vitest';
import { Semaphore } from './semaphore.js';

describe('Semaphore', () => {
  it('serves waiters in FIFO order and counts permits', async () => {
    const sem = new Semaphore(1);
    const order: number[] = [];
    const first = await sem.acquire();
    const waiters = [1, 2, 3].map((n) =>
      sem.acquire().then((release) => {
        order.push(n);
        return release;
      }),
    );
    expect(sem.inUse).toBe(1);
    expect(sem.waiting).toBe(3);
    first();
    first(); // a second release is a no-op
    for (const w of waiters) (await w)();
    expect(order).toEqual([1, 2, 3]);
    expect(sem.inUse).toBe(0);
    expect(sem.waiting).toBe(0);
  });

  it('drops an aborted waiter from the queue', async () => {
    const sem = new Semaphore(1);
    const held = await sem.acquire();
    const ac = new AbortController();
    const gone = sem.acquire(ac.signal);
    ac.abort(new Error('bye'));
    await expect(gone).rejects.toThrow('bye');
    expect(sem.waiting).toBe(0);
    held();
    (await sem.acquire())();
    expect(sem.inUse).toBe(0);
  });

  it('rejects a bad size', () => {
    expect(() => new Semaphore(0)).toThrow(RangeError);
  });
});

describe('Semaphore.tryAcquire', () => {
  it('takes a free permit at once and never jumps the queue', async () => {
    const sem = new Semaphore(1);
    const first = sem.tryAcquire();
    expect(first).toBeTypeOf('function');
    expect(sem.tryAcquire()).toBeUndefined();
    const queued = sem.acquire();
    first?.();
    // The permit went straight to the waiter, so there is still none free.
    expect(sem.tryAcquire()).toBeUndefined();
    (await queued)();
    expect(sem.inUse).toBe(0);
    const again = sem.tryAcquire();
    expect(sem.inUse).toBe(1);
    again?.();
  });
});
