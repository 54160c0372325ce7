import { describe, expect, it } from 'vitest';
import { poll } from './poll.js';

describe('poll', () => {
  it('returns the first value that is done, reading sync or async', async () => {
    let n = 0;
    expect(
      await poll(
        'n to reach 3',
        () => ++n,
        (v) => v >= 3,
        { intervalMs: 1 },
      ),
    ).toBe(3);
    let m = 0;
    expect(await poll('a truthy value', async () => (++m >= 2 ? 'ok' : ''), { intervalMs: 1 })).toBe('ok');
  });

  it('fails naming what it waited for and the last value', async () => {
    await expect(
      poll(
        'the answer',
        () => ({ answer: 41 }),
        (v) => v.answer === 42,
        { timeoutMs: 30, intervalMs: 5 },
      ),
    ).rejects.toThrow('timed out after 30 ms waiting for the answer; last value: {"answer":41}');
  });

  it('lets a failing read fail the wait at once', async () => {
    await expect(poll('a read that throws', () => Promise.reject(new Error('process exited')))).rejects.toThrow('process exited');
  });
});
