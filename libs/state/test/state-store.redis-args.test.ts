import { describe, expect, it } from 'vitest';
import { renderKindPattern } from '../src/keys.js';
import { LUA_SCRIPTS } from '../src/redis/lua/index.js';
import { scanArgs } from '../src/redis/scan.js';
import { commandName } from '../src/redis/scripts.js';
import { indexPopDueArgs, parseScore, scoreArg } from '../src/redis/time-index.js';
import { setArgs } from '../src/redis/values.js';
import { compareAndSwapArgs } from '../src/redis/versioned.js';
import { incrementWindowArgs, readWindowArgs } from '../src/redis/window-counter.js';

// The pure `<op>Args()` builders and script registry, without Redis.
describe('Redis argument builders', () => {
  it('incrementWindowArgs: by, whole windowMs, limit or empty', () => {
    expect(incrementWindowArgs('k', { windowMs: 1000 })).toEqual({ keys: ['k'], args: [1, 1000, ''] });
    expect(incrementWindowArgs('k', { windowMs: 999.2, limit: 5, by: 2 })).toEqual({ keys: ['k'], args: [2, 1000, '5'] });
    expect(incrementWindowArgs('k', { windowMs: 10, limit: 0 }).args[2]).toBe('0');
    expect(() => incrementWindowArgs('k', { windowMs: 0 })).toThrow(RangeError);
    expect(() => incrementWindowArgs('k', { windowMs: 10, by: 1.5 })).toThrow(RangeError);
    expect(readWindowArgs('k')).toEqual({ keys: ['k'], args: [] });
  });

  it('compareAndSwapArgs: expected version, data, TTL or empty', () => {
    expect(compareAndSwapArgs('k', 0, 'v')).toEqual({ keys: ['k'], args: [0, 'v', ''] });
    expect(compareAndSwapArgs('k', 3, 'v', { ttlMs: 250 })).toEqual({ keys: ['k'], args: [3, 'v', 250] });
    expect(() => compareAndSwapArgs('k', 3, 'v', { ttlMs: -1 })).toThrow(RangeError);
  });

  it('setArgs: PX only with a TTL, NX only for setIfAbsent', () => {
    expect(setArgs('k', 'v', undefined, false)).toEqual(['k', 'v']);
    expect(setArgs('k', 'v', { ttlMs: 10 }, true)).toEqual(['k', 'v', 'PX', 10, 'NX']);
    expect(setArgs('k', 'v', {}, true)).toEqual(['k', 'v', 'NX']);
  });

  it('scores: infinities spelled the Redis way, both directions', () => {
    expect(indexPopDueArgs('k', Infinity, 5)).toEqual({ keys: ['k'], args: ['+inf', 5] });
    expect(scoreArg(-Infinity)).toBe('-inf');
    expect(scoreArg(1767225600000.5)).toBe('1767225600000.5');
    expect(() => scoreArg(NaN)).toThrow(RangeError);
    expect(() => indexPopDueArgs('k', 1, -1)).toThrow(RangeError);
    expect([parseScore('inf'), parseScore('-inf'), parseScore('1.5')]).toEqual([Infinity, -Infinity, 1.5]);
  });

  it('scanArgs: the keys.ts pattern, cursor 0 first, count 100 by default', () => {
    expect(scanArgs('p', 'kind')).toEqual({ cursor: '0', pattern: renderKindPattern('p', 'kind'), count: 100 });
    expect(scanArgs('p', 'k', { namespace: 'a:b', cursor: '17', count: 5 })).toEqual({
      cursor: '17',
      pattern: renderKindPattern('p', 'k', { namespace: 'a:b' }),
      count: 5,
    });
    expect(() => scanArgs('p', 'k', { count: 0 })).toThrow(RangeError);
  });
});

describe('Lua scripts', () => {
  it('are named <op>_<source hash> and unique', () => {
    const names = LUA_SCRIPTS.map(commandName);
    for (const [i, s] of LUA_SCRIPTS.entries()) expect(names[i]).toMatch(new RegExp(`^${s.name}_[0-9a-f]{8}$`));
    expect(new Set(names).size).toBe(names.length);
  });

  it('each carries a header listing its KEYS, ARGV and returns', () => {
    for (const s of LUA_SCRIPTS) {
      const header = s.lua.trim().split('\n').filter((l) => l.startsWith('--')).join('\n');
      for (let i = 1; i <= s.numberOfKeys; i++) expect(header, s.name).toContain(`KEYS[${i}]`);
      expect(header, s.name).toMatch(/Returns/);
      expect(s.lua, s.name).not.toMatch(new RegExp(`KEYS\\[${s.numberOfKeys + 1}\\]`));
    }
  });
});
