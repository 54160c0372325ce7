import { describe, expect, it } from 'vitest';
import { key, type ContractContext } from './harness.js';

const T0 = Date.UTC(2026, 0, 1);

export function timeIndexContract(ctx: ContractContext): void {
  describe('time indexes', () => {
    it('pops due members lowest score first, removing them', async () => {
      const idx = key('idx', 'due');
      await ctx.store.indexAdd(idx, 'a', T0 + 30);
      await ctx.store.indexAdd(idx, 'b', T0 + 10);
      await ctx.store.indexAdd(idx, 'c', T0 + 20);
      await ctx.store.indexAdd(idx, 'd', T0 + 40);
      expect(await ctx.store.indexPopDue(idx, T0 + 25, 10)).toEqual([
        { member: 'b', score: T0 + 10 },
        { member: 'c', score: T0 + 20 },
      ]);
      expect(await ctx.store.indexPopDue(idx, T0 + 25, 10)).toEqual([]);
      expect(await ctx.store.indexPopDue(idx, Infinity, 10)).toEqual([
        { member: 'a', score: T0 + 30 },
        { member: 'd', score: T0 + 40 },
      ]);
      expect(await ctx.store.indexPopDue(idx, Infinity, 10)).toEqual([]);
    });

    it('includes a member whose score equals maxScore and keeps fractional scores', async () => {
      const idx = key('idx', 'edge');
      await ctx.store.indexAdd(idx, 'frac', 1.5);
      await ctx.store.indexAdd(idx, 'exact', 2);
      await ctx.store.indexAdd(idx, 'later', 2.25);
      expect(await ctx.store.indexPopDue(idx, 2, 10)).toEqual([
        { member: 'frac', score: 1.5 },
        { member: 'exact', score: 2 },
      ]);
    });

    it('moves a member when added again', async () => {
      const idx = key('idx', 'move');
      await ctx.store.indexAdd(idx, 'a', T0 + 10);
      await ctx.store.indexAdd(idx, 'b', T0 + 20);
      await ctx.store.indexAdd(idx, 'a', T0 + 30);
      expect(await ctx.store.indexPopDue(idx, T0 + 25, 10)).toEqual([{ member: 'b', score: T0 + 20 }]);
      expect(await ctx.store.indexPopDue(idx, T0 + 30, 10)).toEqual([{ member: 'a', score: T0 + 30 }]);
    });

    it('honours the limit and orders equal scores by member', async () => {
      const idx = key('idx', 'limit');
      for (const m of ['e', 'c', 'a', 'd', 'b']) await ctx.store.indexAdd(idx, m, T0);
      expect((await ctx.store.indexPopDue(idx, T0, 2)).map((e) => e.member)).toEqual(['a', 'b']);
      expect((await ctx.store.indexPopDue(idx, T0, 2)).map((e) => e.member)).toEqual(['c', 'd']);
      expect(await ctx.store.indexPopDue(idx, T0, 0)).toEqual([]);
      expect((await ctx.store.indexPopDue(idx, T0, 2)).map((e) => e.member)).toEqual(['e']);
    });

    it('removes single members', async () => {
      const idx = key('idx', 'remove');
      await ctx.store.indexAdd(idx, 'a', 1);
      await ctx.store.indexAdd(idx, 'b', 2);
      expect(await ctx.store.indexRemove(idx, 'a')).toBe(true);
      expect(await ctx.store.indexRemove(idx, 'a')).toBe(false);
      expect(await ctx.store.indexRemove(key('idx', 'absent'), 'a')).toBe(false);
      expect(await ctx.store.indexPopDue(idx, 10, 10)).toEqual([{ member: 'b', score: 2 }]);
    });

    it('hands each due member to exactly one of several concurrent poppers', async () => {
      const idx = key('idx', 'race');
      for (let i = 0; i < 40; i++) await ctx.store.indexAdd(idx, `m${i}`, T0 + i);
      const pops = await Promise.all(Array.from({ length: 12 }, () => ctx.store.indexPopDue(idx, T0 + 29, 3)));
      const members = pops.flat().map((e) => e.member);
      expect(members).toHaveLength(30);
      expect(new Set(members).size).toBe(30);
      expect((await ctx.store.indexPopDue(idx, Infinity, 100)).map((e) => e.member)).toEqual(Array.from({ length: 10 }, (_, i) => `m${30 + i}`));
    });

    it('is deleted like any key', async () => {
      const idx = key('idx', 'del');
      await ctx.store.indexAdd(idx, 'a', 1);
      expect(await ctx.store.delete(idx)).toBe(true);
      expect(await ctx.store.indexPopDue(idx, Infinity, 10)).toEqual([]);
    });
  });
}
