import { describe, expect, it } from 'vitest';
import { key, type ContractContext } from './harness.js';

/** indexAddBounded: the atomic "add while there is room" that record claims are built on. */
export function indexBoundedContract(ctx: ContractContext): void {
  describe('bounded index adds', () => {
    it('adds while there is room, then refuses and changes nothing', async () => {
      const idx = key('bnd', 'room');
      expect(await ctx.store.indexAddBounded(idx, 'a', 1, 2)).toBe('added');
      expect(await ctx.store.indexAddBounded(idx, 'b', 2, 2)).toBe('added');
      expect(await ctx.store.indexAddBounded(idx, 'c', 3, 2)).toBe('full');
      expect(await ctx.store.indexRange(idx, { limit: 10 })).toEqual([
        { member: 'a', score: 1 },
        { member: 'b', score: 2 },
      ]);
    });

    it('leaves a member already there as it is, even when full', async () => {
      const idx = key('bnd', 'present');
      expect(await ctx.store.indexAddBounded(idx, 'a', 1, 1)).toBe('added');
      expect(await ctx.store.indexAddBounded(idx, 'a', 5, 1)).toBe('present');
      expect(await ctx.store.indexAddBounded(idx, 'a', 5, 3)).toBe('present');
      expect(await ctx.store.indexRange(idx, { limit: 10 })).toEqual([{ member: 'a', score: 1 }]);
    });

    it('makes room again when a member is removed', async () => {
      const idx = key('bnd', 'release');
      await ctx.store.indexAddBounded(idx, 'a', 1, 1);
      expect(await ctx.store.indexAddBounded(idx, 'b', 2, 1)).toBe('full');
      expect(await ctx.store.indexRemove(idx, 'a')).toBe(true);
      expect(await ctx.store.indexAddBounded(idx, 'b', 2, 1)).toBe('added');
    });

    it('gives the last slot to exactly one of many concurrent adds', async () => {
      const idx = key('bnd', 'race');
      await ctx.store.indexAdd(idx, 'first', 0);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ctx.store.indexAddBounded(idx, `m${i}`, i, 2)));
      expect(results.filter((r) => r === 'added')).toHaveLength(1);
      expect(results.filter((r) => r === 'full')).toHaveLength(19);
      expect(await ctx.store.indexCount(idx)).toBe(2);
    });

    it('removes a claim only while it still has the score it was taken with', async () => {
      const idx = key('bnd', 'remove-if');
      await ctx.store.indexAddBounded(idx, 'a', 1767225600000.125, 1);
      expect(await ctx.store.indexRemoveIf(idx, 'a', 1767225600000.5)).toBe(false);
      expect(await ctx.store.indexRemoveIf(idx, 'nope', 1767225600000.125)).toBe(false);
      expect(await ctx.store.indexCount(idx)).toBe(1);
      expect(await ctx.store.indexRemoveIf(idx, 'a', 1767225600000.125)).toBe(true);
      expect(await ctx.store.indexCount(idx)).toBe(0);
      expect(await ctx.store.indexRemoveIf(idx, 'a', 1767225600000.125)).toBe(false);
    });

    it('refuses a bad bound on both backends alike', async () => {
      const idx = key('bnd', 'bad');
      await expect(ctx.store.indexAddBounded(idx, 'a', 1, 0)).rejects.toThrow(RangeError);
      await expect(ctx.store.indexAddBounded(idx, 'a', 1, 1.5)).rejects.toThrow(RangeError);
      await expect(ctx.store.indexAddBounded(idx, 'a', Number.NaN, 1)).rejects.toThrow(RangeError);
      expect(await ctx.store.indexCount(idx)).toBe(0);
    });
  });
}
