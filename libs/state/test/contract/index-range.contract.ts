import { describe, expect, it } from 'vitest';
import type { StateKey } from '../../src/state-store.js';
import { key, type ContractContext } from './harness.js';

/** indexRange, indexCount and indexRemoveRange over one time index. */
export function indexRangeContract(ctx: ContractContext): void {
  const fill = async (idx: StateKey, entries: [string, number][]) => {
    for (const [member, score] of entries) await ctx.store.indexAdd(idx, member, score);
  };
  const members = async (idx: StateKey, query: Parameters<typeof ctx.store.indexRange>[1]) => (await ctx.store.indexRange(idx, query)).map((e) => e.member);

  describe('index ranges', () => {
    it('reads nothing from an absent index', async () => {
      const idx = key('rng', 'absent');
      expect(await ctx.store.indexRange(idx, { limit: 10 })).toEqual([]);
      expect(await ctx.store.indexRange(idx, { min: 1, max: 2, rev: true, offset: 3, limit: 10 })).toEqual([]);
      expect(await ctx.store.indexCount(idx)).toBe(0);
      expect(await ctx.store.indexRemoveRange(idx, -Infinity, Infinity)).toBe(0);
    });

    it('includes both bounds and treats an absent bound as unbounded', async () => {
      const idx = key('rng', 'bounds');
      await fill(idx, [
        ['e', 50],
        ['a', 10],
        ['c', 30],
        ['b', 20],
        ['d', 40],
      ]);
      expect(await ctx.store.indexRange(idx, { min: 20, max: 40, limit: 10 })).toEqual([
        { member: 'b', score: 20 },
        { member: 'c', score: 30 },
        { member: 'd', score: 40 },
      ]);
      expect(await members(idx, { limit: 10 })).toEqual(['a', 'b', 'c', 'd', 'e']);
      expect(await members(idx, { min: 30, limit: 10 })).toEqual(['c', 'd', 'e']);
      expect(await members(idx, { max: 20, limit: 10 })).toEqual(['a', 'b']);
      expect(await members(idx, { min: 30, max: 30, limit: 10 })).toEqual(['c']);
      expect(await members(idx, { min: 31, max: 39, limit: 10 })).toEqual([]);
      expect(await members(idx, { min: 40, max: 20, limit: 10 })).toEqual([]);
      expect(await ctx.store.indexCount(idx, 20, 40)).toBe(3);
      expect(await ctx.store.indexCount(idx)).toBe(5);
      expect(await ctx.store.indexCount(idx, 30)).toBe(3);
      expect(await ctx.store.indexCount(idx, undefined, 20)).toBe(2);
      expect(await ctx.store.indexCount(idx, 40, 20)).toBe(0);
    });

    it('orders ties by member bytes, reversed with rev', async () => {
      const idx = key('rng', 'ties');
      await fill(idx, [
        ['d', 2],
        ['c', 1],
        ['a', 1],
        ['b', 1],
        ['z', 0],
      ]);
      expect(await members(idx, { limit: 10 })).toEqual(['z', 'a', 'b', 'c', 'd']);
      expect(await ctx.store.indexRange(idx, { rev: true, limit: 10 })).toEqual([
        { member: 'd', score: 2 },
        { member: 'c', score: 1 },
        { member: 'b', score: 1 },
        { member: 'a', score: 1 },
        { member: 'z', score: 0 },
      ]);
      expect(await members(idx, { min: 1, max: 1, rev: true, limit: 10 })).toEqual(['c', 'b', 'a']);
      expect(await members(idx, { rev: true, offset: 1, limit: 2 })).toEqual(['c', 'b']);
      expect(await members(idx, { max: 1, rev: true, offset: 3, limit: 5 })).toEqual(['z']);
    });

    it('compares members as UTF-8 bytes, not UTF-16 units', async () => {
      const idx = key('rng', 'bytes');
      // '～' (U+FF5E, EF BD 9E) sorts before '🚀' (U+1F680, F0 9F 9A 80), unlike in JS string order.
      await fill(idx, [
        ['🚀', 1],
        ['～', 1],
        ['ä', 1],
        ['b', 1],
        ['B', 1],
      ]);
      expect(await members(idx, { limit: 10 })).toEqual(['B', 'b', 'ä', '～', '🚀']);
      expect(await members(idx, { rev: true, limit: 10 })).toEqual(['🚀', '～', 'ä', 'b', 'B']);
    });

    it('pages with offset and limit, in both directions', async () => {
      const idx = key('rng', 'pages');
      const all = Array.from({ length: 7 }, (_, i) => `m${i}`);
      await fill(
        idx,
        all.map((m, i) => [m, 100 + i]),
      );
      const pages: string[] = [];
      for (let offset = 0; offset < 7; offset += 3) pages.push(...(await members(idx, { offset, limit: 3 })));
      expect(pages).toEqual(all);
      expect(await members(idx, { rev: true, offset: 5, limit: 3 })).toEqual(['m1', 'm0']);
      expect(await members(idx, { min: 102, offset: 4, limit: 3 })).toEqual(['m6']);
      expect(await members(idx, { offset: 7, limit: 3 })).toEqual([]);
      expect(await members(idx, { offset: 100, limit: 3 })).toEqual([]);
      expect(await members(idx, { rev: true, offset: 100, limit: 3 })).toEqual([]);
      expect(await members(idx, { limit: 0 })).toEqual([]);
      expect(await members(idx, { limit: 100 })).toEqual(all);
    });

    it('keeps fractional and infinite scores', async () => {
      const idx = key('rng', 'inf');
      await fill(idx, [
        ['top', Infinity],
        ['bottom', -Infinity],
        ['half', 0.5],
      ]);
      expect(await ctx.store.indexRange(idx, { limit: 10 })).toEqual([
        { member: 'bottom', score: -Infinity },
        { member: 'half', score: 0.5 },
        { member: 'top', score: Infinity },
      ]);
      expect(await members(idx, { min: 0, limit: 10 })).toEqual(['half', 'top']);
      expect(await members(idx, { min: Infinity, max: Infinity, limit: 10 })).toEqual(['top']);
      expect(await ctx.store.indexCount(idx, -Infinity, 0.5)).toBe(2);
    });

    it('sees moved members at their new score', async () => {
      const idx = key('rng', 'move');
      await fill(idx, [
        ['a', 1],
        ['b', 2],
        ['a', 3],
      ]);
      expect(await ctx.store.indexRange(idx, { limit: 10 })).toEqual([
        { member: 'b', score: 2 },
        { member: 'a', score: 3 },
      ]);
      expect(await ctx.store.indexCount(idx, 1, 1)).toBe(0);
    });

    it('removes a score range inclusively and returns how many', async () => {
      const idx = key('rng', 'remove');
      await fill(idx, [
        ['a', 10],
        ['b', 20],
        ['c', 30],
        ['d', 40],
      ]);
      expect(await ctx.store.indexRemoveRange(idx, 20, 30)).toBe(2);
      expect(await members(idx, { limit: 10 })).toEqual(['a', 'd']);
      expect(await ctx.store.indexRemoveRange(idx, 20, 30)).toBe(0);
      expect(await ctx.store.indexRemoveRange(idx, 50, 10)).toBe(0);
      expect(await ctx.store.indexRemoveRange(idx, -Infinity, 10)).toBe(1);
      expect(await ctx.store.indexCount(idx)).toBe(1);
    });

    it('an index emptied by indexRemoveRange disappears', async () => {
      const idx = key('rng', 'empty');
      await fill(idx, [
        ['a', 1],
        ['b', 2],
      ]);
      expect(await ctx.store.indexRemoveRange(idx, -Infinity, Infinity)).toBe(2);
      expect(await ctx.store.delete(idx)).toBe(false);
      expect(await ctx.store.indexRange(idx, { limit: 10 })).toEqual([]);
    });

    it('rejects bad queries before touching the store', async () => {
      const idx = key('rng', 'bad');
      await expect(ctx.store.indexRange(idx, { limit: -1 })).rejects.toThrow(RangeError);
      await expect(ctx.store.indexRange(idx, { limit: 1.5 })).rejects.toThrow(RangeError);
      await expect(ctx.store.indexRange(idx, { offset: -1, limit: 1 })).rejects.toThrow(RangeError);
      await expect(ctx.store.indexRange(idx, { min: NaN, limit: 1 })).rejects.toThrow(RangeError);
      await expect(ctx.store.indexCount(idx, 0, NaN)).rejects.toThrow(RangeError);
      await expect(ctx.store.indexRemoveRange(idx, NaN, 1)).rejects.toThrow(RangeError);
    });
  });
}
