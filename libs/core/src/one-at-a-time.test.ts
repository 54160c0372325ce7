import { describe, expect, it } from 'vitest';
import { oneAtATime } from './one-at-a-time.js';

describe('oneAtATime', () => {
  it('skips ticks while a run is in flight and runs again once it ends, failed or not', async () => {
    const finish: Array<() => void> = [];
    let runs = 0;
    const tick = oneAtATime(async () => {
      runs++;
      await new Promise<void>((resolve) => finish.push(resolve));
      if (runs === 1) throw new Error('first run fails');
    });
    const first = tick();
    await tick();
    await tick();
    expect(runs).toBe(1);
    finish.shift()?.();
    await expect(first).rejects.toThrow('first run fails');
    const second = tick();
    expect(runs).toBe(2);
    finish.shift()?.();
    await second;
  });
});
