import { describe, expect, it } from 'vitest';
import { RedisStats, type RedisSnapshot } from './redis-stats.js';
import { redisCommandsTable } from './report.js';
import type { ScenarioResult } from './scenario-result.js';

const snapshot = (calls: Record<string, number>, usec: Record<string, number>, cpuMs: number): RedisSnapshot => ({
  calls,
  usec,
  readsProcessed: 0,
  netInputBytes: 0,
  cpuMs,
  usedMemory: 0,
});

describe('Redis time by command', () => {
  it('takes the commands’ time from INFO commandstats deltas, without its own INFO, and adds up servers', () => {
    const before = snapshot({ zadd: 10, set: 5, info: 3 }, { zadd: 100, set: 40, info: 90 }, 1000);
    const after = snapshot({ zadd: 30, set: 15, info: 4, xadd: 10 }, { zadd: 400, set: 90, info: 120, xadd: 70 }, 1002);
    const d = RedisStats.delta(after, before);
    expect(d.byCommand).toEqual({ zadd: 20, set: 10, xadd: 10 });
    expect(d.usecByCommand).toEqual({ zadd: 300, set: 50, xadd: 70 });
    expect(RedisStats.sum([d, d]).usecByCommand).toEqual({ zadd: 600, set: 100, xadd: 140 });
  });

  it('lists each Redis scenario’s largest commands, µs per dispatch, beside its CPU', () => {
    const redis = { cpuMsPerDispatch: 0.028, commandUsecPerDispatch: { set: 1.5, zadd: 9.25, xadd: 2 } };
    const table = redisCommandsTable([{ id: 'e', redis } as unknown as ScenarioResult, { id: 'b', redis: null } as unknown as ScenarioResult], 2);
    expect(table.split('\n')).toEqual([
      '| scenario | Redis CPU µs/dispatch | in commands | largest, µs per dispatch |',
      '|---|--:|--:|---|',
      '| e | 28.0 | 12.8 | zadd 9.3, xadd 2.0 |',
    ]);
    expect(redisCommandsTable([{ id: 'b', redis: null } as unknown as ScenarioResult])).toBe('');
  });
});
