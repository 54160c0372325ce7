import { describe, expect, it } from 'vitest';
import { key, type ContractContext } from './harness.js';

/** Logs (Redis Streams): append-only, ordered ids, range reads after an id, a length bound. */
export function logContract(ctx: ContractContext): void {
  describe('logs', () => {
    it('appends with increasing ids and reads in order, after an id, at most limit', async () => {
      const log = key('log', 'order');
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await ctx.store.logAppend(log, `m${i}`, 100));
      const parse = (id: string) => id.split('-').map(Number) as [number, number];
      for (let i = 1; i < ids.length; i++) {
        const [a, b] = [parse(ids[i - 1] as string), parse(ids[i] as string)];
        expect(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])).toBe(true);
      }
      expect((await ctx.store.logRange(log, { limit: 10 })).map((e) => e.message)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
      expect(await ctx.store.logRange(log, { afterId: ids[1], limit: 2 })).toEqual([
        { id: ids[2], message: 'm2' },
        { id: ids[3], message: 'm3' },
      ]);
      expect(await ctx.store.logRange(log, { afterId: ids[4], limit: 10 })).toEqual([]);
      expect(await ctx.store.logLength(log)).toBe(5);
    });

    it('keeps about the newest maxLen entries (never fewer), and an absent log is empty', async () => {
      const log = key('log', 'capped');
      for (let i = 0; i < 300; i++) await ctx.store.logAppend(log, `m${i}`, 10);
      const length = await ctx.store.logLength(log);
      expect(length).toBeGreaterThanOrEqual(10);
      expect(length).toBeLessThan(300);
      const all = await ctx.store.logRange(log, { limit: 1000 });
      expect(all.at(-1)?.message).toBe('m299');
      expect(await ctx.store.logLength(key('log', 'none'))).toBe(0);
      expect(await ctx.store.logRange(key('log', 'none'), { limit: 5 })).toEqual([]);
      await expect(ctx.store.logAppend(log, 'x', 0)).rejects.toThrow(/maxLen/);
    });

    it('removes given entries, counting those there were; the others stay in order', async () => {
      const log = key('log', 'remove');
      const ids = [await ctx.store.logAppend(log, 'a', 10), await ctx.store.logAppend(log, 'b', 10), await ctx.store.logAppend(log, 'c', 10)];
      expect(await ctx.store.logRemove(log, [ids[1] as string, '1-1'])).toBe(1);
      expect((await ctx.store.logRange(log, { limit: 10 })).map((e) => e.message)).toEqual(['a', 'c']);
      expect(await ctx.store.logRemove(log, [])).toBe(0);
      expect(await ctx.store.logRemove(key('log', 'none'), ['1-1'])).toBe(0);
    });

    it('is deleted like any key', async () => {
      const log = key('log', 'gone');
      await ctx.store.logAppend(log, 'm', 10);
      expect(await ctx.store.delete(log)).toBe(true);
      expect(await ctx.store.logLength(log)).toBe(0);
    });

    it('consumer groups: each message to one consumer, pending until acked; lag counts what is not acked', async () => {
      const log = key('log', 'group');
      await ctx.store.logAppend(log, 'before', 100);
      expect(await ctx.store.logGroupCreate(log, 'g', 'end')).toBe(true);
      expect(await ctx.store.logGroupCreate(log, 'g', 'end')).toBe(false);
      expect(await ctx.store.logGroupCreate(log, 'all', 'start')).toBe(true);
      for (const m of ['m1', 'm2', 'm3']) await ctx.store.logAppend(log, m, 100);
      const first = await ctx.store.logGroupRead(log, 'g', 'c1', 2);
      expect(first.map((d) => [d.message, d.deliveries])).toEqual([
        ['m1', 1],
        ['m2', 1],
      ]);
      expect((await ctx.store.logGroupRead(log, 'g', 'c2', 10)).map((d) => d.message)).toEqual(['m3']);
      expect(await ctx.store.logGroupRead(log, 'g', 'c2', 10)).toEqual([]);
      expect(await ctx.store.logGroupLag(log, 'g')).toEqual({ pending: 3, undelivered: 0 });
      expect(await ctx.store.logGroupAck(log, 'g', [first[0]?.id as string, '1-1'])).toBe(1);
      expect(await ctx.store.logGroupLag(log, 'g')).toEqual({ pending: 2, undelivered: 0 });
      expect(await ctx.store.logGroupLag(log, 'all')).toEqual({ pending: 0, undelivered: 4 });
      await expect(ctx.store.logGroupRead(log, 'nobody', 'c', 1)).rejects.toThrow(/NOGROUP/);
    });

    it('hands a message left pending past minIdleMs to another consumer, counting deliveries', async () => {
      const log = key('log', 'claim');
      await ctx.store.logGroupCreate(log, 'g', 'end');
      await ctx.store.logAppend(log, 'm', 100);
      const [delivered] = await ctx.store.logGroupRead(log, 'g', 'dead', 1);
      expect(await ctx.store.logGroupClaim(log, 'g', 'alive', ctx.unit, 10)).toEqual([]);
      await ctx.h.advance(ctx.unit + ctx.tol + 50);
      expect(await ctx.store.logGroupClaim(log, 'g', 'alive', ctx.unit, 10)).toEqual([{ id: delivered?.id, message: 'm', deliveries: 2 }]);
      await ctx.h.advance(ctx.unit + ctx.tol + 50);
      expect((await ctx.store.logGroupClaim(log, 'g', 'third', ctx.unit, 10))[0]?.deliveries).toBe(3);
      expect(await ctx.store.logGroupAck(log, 'g', [delivered?.id as string])).toBe(1);
      expect(await ctx.store.logGroupLag(log, 'g')).toEqual({ pending: 0, undelivered: 0 });
    });

    it('claims only other consumers’ messages when asked (othersOnly): a reader is not handed back what it holds', async () => {
      const log = key('log', 'claim-others');
      await ctx.store.logGroupCreate(log, 'g', 'end');
      await ctx.store.logAppend(log, 'mine', 100);
      const [mine] = await ctx.store.logGroupRead(log, 'g', 'a', 1);
      await ctx.h.advance(ctx.unit + ctx.tol + 50);
      expect(await ctx.store.logGroupClaim(log, 'g', 'a', ctx.unit, 10, { othersOnly: true })).toEqual([]);
      expect(await ctx.store.logGroupClaim(log, 'g', 'b', ctx.unit, 10, { othersOnly: true })).toEqual([{ id: mine?.id, message: 'mine', deliveries: 2 }]);
      // Now b's: a may take it back once it is idle again, b may not.
      await ctx.h.advance(ctx.unit + ctx.tol + 50);
      expect(await ctx.store.logGroupClaim(log, 'g', 'b', ctx.unit, 10, { othersOnly: true })).toEqual([]);
      expect(await ctx.store.logGroupClaim(log, 'g', 'a', ctx.unit, 10, { othersOnly: true })).toEqual([{ id: mine?.id, message: 'mine', deliveries: 3 }]);
      expect(await ctx.store.logGroupLag(log, 'g')).toEqual({ pending: 1, undelivered: 0 });
    });

    it('lag counts as undelivered only what the log still holds after the group, however far behind', async () => {
      const log = key('log', 'lag-trimmed');
      await ctx.store.logGroupCreate(log, 'g', 'end');
      for (let i = 0; i < 5; i++) await ctx.store.logAppend(log, `m${i}`, 10);
      await ctx.store.logGroupAck(
        log,
        'g',
        (await ctx.store.logGroupRead(log, 'g', 'c', 10)).map((d) => d.id),
      );
      for (let i = 0; i < 300; i++) await ctx.store.logAppend(log, `n${i}`, 10);
      const held = await ctx.store.logLength(log);
      expect(await ctx.store.logGroupLag(log, 'g')).toEqual({ pending: 0, undelivered: held });
      await ctx.store.logGroupAck(
        log,
        'g',
        (await ctx.store.logGroupRead(log, 'g', 'c', 1000)).map((d) => d.id),
      );
      await ctx.store.logAppend(log, 'last', 10);
      expect(await ctx.store.logGroupLag(log, 'g')).toEqual({ pending: 0, undelivered: 1 });

      // A long log, the group in its middle: counted exactly.
      const long = key('log', 'lag-long');
      await ctx.store.logGroupCreate(long, 'g', 'end');
      for (let i = 0; i < 3000; i++) await ctx.store.logAppend(long, `m${i}`, 10_000);
      await ctx.store.logGroupRead(long, 'g', 'c', 500);
      expect(await ctx.store.logGroupLag(long, 'g')).toEqual({ pending: 500, undelivered: 2500 });
      await ctx.store.logGroupRead(long, 'g', 'c', 1000);
      expect(await ctx.store.logGroupLag(long, 'g')).toEqual({ pending: 1500, undelivered: 1500 });
      await ctx.store.logGroupRead(long, 'g', 'c', 1000);
      expect(await ctx.store.logGroupLag(long, 'g')).toEqual({ pending: 2500, undelivered: 500 });
    });
  });
}
