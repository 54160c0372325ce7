import { describe, expect, it } from 'vitest';
import type { DeferrableWriteOp } from '../../src/state-store.js';
import { key, type ContractContext } from './harness.js';

/** getMany and writeBatch, including the TTL rules of WriteOp. */
export function batchContract(ctx: ContractContext): void {
  describe('getMany', () => {
    it('answers in key order, with null where absent', async () => {
      await ctx.store.set(key('many', 'a'), 'A');
      await ctx.store.set(key('many', 'b', 'ns', 't2'), 'B');
      const keys = [key('many', 'b', 'ns', 't2'), key('many', 'absent'), key('many', 'a'), key('many', 'b', 'ns', 't2')];
      expect(await ctx.store.getMany(keys)).toEqual(['B', null, 'A', 'B']);
      expect(await ctx.store.getMany([])).toEqual([]);
      expect(await ctx.store.getMany([key('many', 'absent')])).toEqual([null]);
    });

    it('reads counters as decimal strings, and null once a value expired', async () => {
      await ctx.store.writeBatch([
        { op: 'increment', key: key('many', 'n'), by: 42 },
        { op: 'increment', key: key('many', 'neg'), by: -7 },
      ]);
      await ctx.store.set(key('many', 'ttl'), 'v', { ttlMs: ctx.unit });
      const keys = [key('many', 'n'), key('many', 'neg'), key('many', 'ttl')];
      expect(await ctx.store.getMany(keys)).toEqual(['42', '-7', 'v']);
      await ctx.h.advance(2 * ctx.unit);
      expect(await ctx.store.getMany(keys)).toEqual(['42', '-7', null]);
    });
  });

  describe('writeBatch', () => {
    it('applies the writes in order', async () => {
      const idx = key('batch', 'idx');
      await ctx.store.writeBatch([
        { op: 'set', key: key('batch', 'v'), value: 'first' },
        { op: 'increment', key: key('batch', 'n'), by: 2 },
        { op: 'set', key: key('batch', 'v'), value: 'second' },
        { op: 'increment', key: key('batch', 'n'), by: 3 },
        { op: 'indexAdd', index: idx, member: 'a', score: 1 },
        { op: 'indexAdd', index: idx, member: 'b', score: 2 },
        { op: 'indexAdd', index: idx, member: 'a', score: 3 },
      ]);
      expect(await ctx.store.getMany([key('batch', 'v'), key('batch', 'n')])).toEqual(['second', '5']);
      expect(await ctx.store.indexRange(idx, { limit: 10 })).toEqual([
        { member: 'b', score: 2 },
        { member: 'a', score: 3 },
      ]);
    });

    it('creates counters at 0, readable with get(), and adds to them across batches', async () => {
      const n = key('batch', 'counter');
      await ctx.store.writeBatch([{ op: 'increment', key: n, by: 0 }]);
      expect(await ctx.store.get(n)).toBe('0');
      await ctx.store.writeBatch([{ op: 'increment', key: n, by: 10 }]);
      await ctx.store.writeBatch([{ op: 'increment', key: n, by: -4 }]);
      expect(await ctx.store.get(n)).toBe('6');
      expect(await ctx.store.delete(n)).toBe(true);
      expect(await ctx.store.get(n)).toBeNull();
    });

    it('indexRemove removes a member (absent ones are no-ops) and an emptied index is gone', async () => {
      const idx = key('batch', 'removals');
      await ctx.store.writeBatch([
        { op: 'indexAdd', index: idx, member: 'a', score: 1 },
        { op: 'indexAdd', index: idx, member: 'b', score: 2 },
      ]);
      await ctx.store.writeBatch([
        { op: 'indexRemove', index: idx, member: 'a' },
        { op: 'indexRemove', index: idx, member: 'never-added' },
        { op: 'indexRemove', index: key('batch', 'no-such-index'), member: 'x' },
      ]);
      expect((await ctx.store.indexRange(idx, { limit: 10 })).map((e) => e.member)).toEqual(['b']);
      await ctx.store.writeBatch([{ op: 'indexRemove', index: idx, member: 'b' }]);
      expect(await ctx.store.indexCount(idx)).toBe(0);
      await expect(
        ctx.store.compareAndSwapWith(key('batch', 'cas'), 0, 'v', [{ op: 'indexRemove', index: key('batch', 'cas-idx'), member: 'a' }]),
      ).rejects.toThrow(/indexRemove is a writeBatch op/);
    });

    it('resolves at once for an empty batch', async () => {
      await expect(ctx.store.writeBatch([])).resolves.toBeUndefined();
    });

    it('set replaces the expiry, like set()', async () => {
      const shortened = key('batch', 'set-short');
      const cleared = key('batch', 'set-clear');
      await ctx.store.set(shortened, 'old', { ttlMs: 10 * ctx.unit });
      await ctx.store.set(cleared, 'old', { ttlMs: ctx.unit });
      await ctx.store.writeBatch([
        { op: 'set', key: shortened, value: 'new', ttlMs: ctx.unit },
        { op: 'set', key: cleared, value: 'new' },
      ]);
      await ctx.h.advance(2 * ctx.unit);
      expect(await ctx.store.getMany([shortened, cleared])).toEqual([null, 'new']);
    });

    it('a counter keeps the expiry it was created with', async () => {
      const n = key('batch', 'ttl-counter');
      await ctx.store.writeBatch([{ op: 'increment', key: n, by: 1, ttlMs: 2 * ctx.unit }]);
      await ctx.h.advance(ctx.unit);
      // Neither a longer TTL nor none at all moves the expiry.
      await ctx.store.writeBatch([{ op: 'increment', key: n, by: 1, ttlMs: 10 * ctx.unit }]);
      await ctx.store.writeBatch([{ op: 'increment', key: n, by: 1 }]);
      expect(await ctx.store.get(n)).toBe('3');
      await ctx.h.advance(1.5 * ctx.unit);
      expect(await ctx.store.get(n)).toBeNull();
      // Expired: the next increment starts a new counter with a new expiry.
      await ctx.store.writeBatch([{ op: 'increment', key: n, by: 1, ttlMs: 2 * ctx.unit }]);
      expect(await ctx.store.get(n)).toBe('1');
    });

    it('a shorter TTL does not shorten a counter, and a counter without expiry gets one', async () => {
      const long = key('batch', 'ttl-long');
      const persistent = key('batch', 'ttl-none');
      await ctx.store.writeBatch([
        { op: 'increment', key: long, by: 1, ttlMs: 4 * ctx.unit },
        { op: 'increment', key: persistent, by: 1 },
      ]);
      await ctx.store.writeBatch([
        { op: 'increment', key: long, by: 1, ttlMs: ctx.unit },
        { op: 'increment', key: persistent, by: 1, ttlMs: ctx.unit },
      ]);
      await ctx.h.advance(2 * ctx.unit);
      expect(await ctx.store.getMany([long, persistent])).toEqual(['2', null]);
    });

    it('an index keeps the expiry it was created with, then disappears', async () => {
      const idx = key('batch', 'ttl-index');
      await ctx.store.writeBatch([{ op: 'indexAdd', index: idx, member: 'a', score: 1, ttlMs: 2 * ctx.unit }]);
      await ctx.h.advance(ctx.unit);
      await ctx.store.writeBatch([{ op: 'indexAdd', index: idx, member: 'b', score: 2, ttlMs: 10 * ctx.unit }]);
      await ctx.store.indexAdd(idx, 'c', 3);
      expect(await ctx.store.indexCount(idx)).toBe(3);
      await ctx.h.advance(1.5 * ctx.unit);
      expect(await ctx.store.indexCount(idx)).toBe(0);
      expect(await ctx.store.indexRange(idx, { limit: 10 })).toEqual([]);
      expect(await ctx.store.delete(idx)).toBe(false);
    });

    it('an index created by indexAdd() gets the first expiry a batch gives it', async () => {
      const idx = key('batch', 'ttl-late');
      await ctx.store.indexAdd(idx, 'a', 1);
      await ctx.store.writeBatch([{ op: 'indexAdd', index: idx, member: 'b', score: 2, ttlMs: ctx.unit }]);
      await ctx.h.advance(2 * ctx.unit);
      expect(await ctx.store.indexCount(idx)).toBe(0);
    });

    it('rejects bad arguments with nothing written', async () => {
      const v = key('batch', 'untouched');
      const bad = [
        { op: 'increment', key: key('batch', 'n'), by: 1, ttlMs: 0 },
        { op: 'increment', key: key('batch', 'n'), by: 1.5 },
        { op: 'indexAdd', index: key('batch', 'i'), member: 'm', score: NaN },
        { op: 'set', key: v, value: 'x', ttlMs: -1 },
      ] as const;
      for (const op of bad) {
        await expect(ctx.store.writeBatch([{ op: 'set', key: v, value: 'x' }, op])).rejects.toThrow(RangeError);
      }
      expect(await ctx.store.get(v)).toBeNull();
    });

    it('rejects when a write fails, still applying the others (a pipeline, not a transaction)', async () => {
      const text = key('batch', 'text');
      await ctx.store.set(text, 'not a number');
      await expect(
        ctx.store.writeBatch([
          { op: 'set', key: key('batch', 'before'), value: 'x' },
          { op: 'increment', key: text, by: 1 },
          { op: 'set', key: key('batch', 'after'), value: 'y' },
        ]),
      ).rejects.toThrow(/not an integer/);
      expect(await ctx.store.getMany([key('batch', 'before'), text, key('batch', 'after')])).toEqual(['x', 'not a number', 'y']);
      await expect(ctx.store.writeBatch([{ op: 'indexAdd', index: text, member: 'm', score: 1 }])).rejects.toThrow(/WRONGTYPE/);
    });
  });

  describe('writeBatch with deferred writes', () => {
    it('applies them by applyDeferred, with the same result as writing them one by one', async () => {
      const n = key('deferred', 'n');
      const zero = key('deferred', 'zero');
      const idx = key('deferred', 'idx');
      const v = key('deferred', 'v');
      await ctx.store.writeBatch([{ op: 'set', key: v, value: 'now' }], {
        deferred: [
          { op: 'increment', key: n, by: 2 },
          { op: 'indexAdd', index: idx, member: 'a', score: 1 },
          { op: 'indexAdd', index: idx, member: 'b', score: 2 },
        ],
      });
      expect(await ctx.store.get(v)).toBe('now');
      await ctx.store.writeBatch([], {
        deferred: [
          { op: 'increment', key: n, by: 3 },
          { op: 'increment', key: n, by: -1 },
          { op: 'indexAdd', index: idx, member: 'a', score: 3 },
          { op: 'increment', key: zero, by: 0 },
        ],
      });
      await ctx.store.applyDeferred();
      expect(await ctx.store.getMany([n, zero])).toEqual(['4', '0']);
      expect(await ctx.store.indexRange(idx, { limit: 10 })).toEqual([
        { member: 'b', score: 2 },
        { member: 'a', score: 3 },
      ]);
    });

    it('gives a key the first TTL of its writes, and never moves an expiry it already has', async () => {
      const fresh = key('deferred', 'ttl-fresh');
      const kept = key('deferred', 'ttl-kept');
      const idx = key('deferred', 'ttl-index');
      await ctx.store.writeBatch([{ op: 'increment', key: kept, by: 1, ttlMs: 2 * ctx.unit }]);
      await ctx.store.writeBatch([], {
        deferred: [
          { op: 'increment', key: fresh, by: 1, ttlMs: 2 * ctx.unit },
          { op: 'increment', key: fresh, by: 1, ttlMs: 10 * ctx.unit },
          { op: 'increment', key: kept, by: 1, ttlMs: 10 * ctx.unit },
          { op: 'indexAdd', index: idx, member: 'a', score: 1, ttlMs: 2 * ctx.unit },
        ],
      });
      await ctx.store.applyDeferred();
      expect(await ctx.store.getMany([fresh, kept])).toEqual(['2', '2']);
      await ctx.h.advance(3 * ctx.unit);
      expect(await ctx.store.getMany([fresh, kept])).toEqual([null, null]);
      expect(await ctx.store.indexCount(idx)).toBe(0);
    });

    it('rejects a deferred set or a bad argument with nothing written', async () => {
      const v = key('deferred', 'untouched');
      const bad = [
        { op: 'set', key: key('deferred', 's'), value: 'x' },
        { op: 'increment', key: key('deferred', 'n'), by: 1.5 },
        { op: 'indexAdd', index: key('deferred', 'i'), member: 'm', score: NaN, ttlMs: 0 },
      ];
      for (const op of bad) {
        const deferred = [op] as unknown as DeferrableWriteOp[];
        await expect(ctx.store.writeBatch([{ op: 'set', key: v, value: 'x' }], { deferred })).rejects.toThrow(RangeError);
      }
      await ctx.store.applyDeferred();
      expect(await ctx.store.getMany([v, key('deferred', 's'), key('deferred', 'n')])).toEqual([null, null, null]);
      expect(await ctx.store.indexCount(key('deferred', 'i'))).toBe(0);
    });

    it('defers indexRemove too: applied after the additions of the same apply', async () => {
      const idx = key('deferred', 'removals');
      await ctx.store.writeBatch([{ op: 'indexAdd', index: idx, member: 'settled', score: 1 }]);
      await ctx.store.writeBatch([{ op: 'indexAdd', index: idx, member: 'open', score: 2 }]);
      await ctx.store.writeBatch([], { deferred: [{ op: 'indexRemove', index: idx, member: 'settled' }] });
      await ctx.store.applyDeferred();
      expect((await ctx.store.indexRange(idx, { limit: 10 })).map((e) => e.member)).toEqual(['open']);
    });

    it('applyDeferred resolves when nothing is queued', async () => {
      await expect(ctx.store.applyDeferred()).resolves.toBeUndefined();
    });
  });
}
