import { describe, expect, it } from 'vitest';
import { Semaphore } from './semaphore.js';

describe('Semaphore', () => {
  it('serves waiters in FIFO order and counts permits', async () => {
    const sem = new Semaphore(1);
    const order: number[] = [];
    const first = await sem.acquire();
    const waiters = [1, 2, 3].map((n) => sem.acquire().then((release) => (order.push(n), release)));
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
