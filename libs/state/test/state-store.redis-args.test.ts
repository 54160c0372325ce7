import { describe, expect, it } from 'vitest';
import { renderKey, renderKindPattern } from '../src/keys.js';
import { writeBatchCommands } from '../src/redis/batch.js';
import { compareAndSwapWithArgs } from '../src/redis/compare-and-swap-with.js';
import { indexRangeArgs, scoreRangeArgs } from '../src/redis/index-range.js';
import { LUA_SCRIPTS } from '../src/redis/lua/index.js';
import { scanArgs } from '../src/redis/scan.js';
import { commandName } from '../src/redis/scripts.js';
import { indexAddBoundedArgs, indexPopDueArgs, indexRemoveIfArgs, parseScore, scoreArg } from '../src/redis/time-index.js';
import { setArgs } from '../src/redis/values.js';
import { compareAndSwapArgs } from '../src/redis/versioned.js';
import { incrementWindowArgs, readWindowArgs } from '../src/redis/window-counter.js';

// The pure `<op>Args()` builders and script registry, without Redis.
describe('Redis argument builders', () => {
  it('incrementWindowArgs: by, whole windowMs, limit or empty', () => {
    expect(incrementWindowArgs('k', { windowMs: 1000 })).toEqual({ keys: ['k'], args: [1, 1000, ''] });
    expect(incrementWindowArgs('k', { windowMs: 999.2, limit: 5, by: 2 })).toEqual({ keys: ['k'], args: [2, 1000, '5'] });
    expect(incrementWindowArgs('k', { windowMs: 10, limit: 0 }).args[2]).toBe('0');
    expect(incrementWindowArgs('k', { windowMs: 10, by: -2, windowEndsAtMs: 1234.4 }).args).toEqual([-2, 10, '', 1234]);
    expect(() => incrementWindowArgs('k', { windowMs: 10, windowEndsAtMs: Number.NaN })).toThrow(RangeError);
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

  it('indexAddBoundedArgs: score, member, a positive whole bound', () => {
    expect(indexAddBoundedArgs('k', 'm', 12.5, 3)).toEqual({ keys: ['k'], args: ['12.5', 'm', 3] });
    expect(() => indexAddBoundedArgs('k', 'm', 1, 0)).toThrow(RangeError);
    expect(() => indexAddBoundedArgs('k', 'm', NaN, 1)).toThrow(RangeError);
    expect(indexRemoveIfArgs('k', 'm', 1767225600000.001)).toEqual({ keys: ['k'], args: ['m', '1767225600000.001'] });
  });

  it('indexRangeArgs: BYSCORE with infinities for absent bounds; REV swaps the bounds', () => {
    expect(indexRangeArgs('k', { limit: 5 })).toEqual(['k', '-inf', '+inf', 'BYSCORE', 'LIMIT', 0, 5, 'WITHSCORES']);
    expect(indexRangeArgs('k', { min: 1, max: 9, rev: true, offset: 2, limit: 3 })).toEqual(['k', '9', '1', 'BYSCORE', 'REV', 'LIMIT', 2, 3, 'WITHSCORES']);
    expect(scoreRangeArgs(undefined, 4.5)).toEqual(['-inf', '4.5']);
    expect(() => indexRangeArgs('k', { limit: -1 })).toThrow(RangeError);
    expect(() => indexRangeArgs('k', { offset: 0.5, limit: 1 })).toThrow(RangeError);
  });

  it('writeBatchCommands: SET [PX]; INCRBY and ZADD followed by PEXPIRE NX only with a TTL', () => {
    const k = (id: string) => ({ kind: 'k', namespace: 'n', tenant: 't', id });
    const render = (key: { id: string }) => `p:${key.id}`;
    expect(
      writeBatchCommands(
        [
          { op: 'set', key: k('a'), value: 'v' },
          { op: 'set', key: k('b'), value: 'v', ttlMs: 10.2 },
          { op: 'increment', key: k('c'), by: -2 },
          { op: 'increment', key: k('d'), by: 1, ttlMs: 50 },
          { op: 'indexAdd', index: k('e'), member: 'm', score: Infinity, ttlMs: 50 },
        ],
        render,
      ),
    ).toEqual([
      ['set', 'p:a', 'v'],
      ['set', 'p:b', 'v', 'PX', 11],
      ['incrby', 'p:c', -2],
      ['incrby', 'p:d', 1],
      ['pexpire', 'p:d', 50, 'NX'],
      ['zadd', 'p:e', '+inf', 'm'],
      ['pexpire', 'p:e', 50, 'NX'],
    ]);
    expect(() => writeBatchCommands([{ op: 'increment', key: k('x'), by: 0.5 }], render)).toThrow(RangeError);
  });

  it('compareAndSwapWithArgs: the CAS key first, four ARGV per write, same scope only', () => {
    const k = (id: string, tenant = 't') => ({ kind: 'k', namespace: 'n', tenant, id });
    const render = (key: ReturnType<typeof k>) => renderKey('p', key);
    expect(
      compareAndSwapWithArgs(
        k('doc'),
        3,
        'data',
        [
          { op: 'set', key: k('a'), value: 'v', ttlMs: 10 },
          { op: 'increment', key: k('b'), by: 2 },
          { op: 'indexAdd', index: k('c'), member: 'm', score: 1.5, ttlMs: 20 },
        ],
        render,
      ),
    ).toEqual({
      keys: [render(k('doc')), render(k('a')), render(k('b')), render(k('c'))],
      args: [3, 'data', 'set', 'v', '', 10, 'incr', 2, '', '', 'zadd', '1.5', 'm', 20],
    });
    expect(() => compareAndSwapWithArgs(k('doc'), 0, 'd', [{ op: 'set', key: k('a', 'other'), value: 'v' }], render)).toThrow(RangeError);
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
      const header = s.lua
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('--'))
        .join('\n');
      for (let i = 1; i <= s.numberOfKeys; i++) expect(header, s.name).toContain(`KEYS[${i}]`);
      expect(header, s.name).toMatch(/Returns/);
      if (s.variadicKeys === true) expect(s.lua, s.name).toContain('#KEYS');
      else expect(s.lua, s.name).not.toMatch(new RegExp(`KEYS\\[${s.numberOfKeys + 1}\\]`));
    }
  });
});
