import { describe, expect, it } from 'vitest';
import type { WriteOp } from '../../src/state-store.js';
import { key, type ContractContext } from './harness.js';

/** compareAndSwapWith: a versioned write plus WriteOps, all or nothing. */
export function versionedWithContract(ctx: ContractContext): void {
  const cas = key('cw', 'doc');
  const idx = key('cw', 'idx');
  const counter = key('cw', 'count');
  const plain = key('cw', 'plain');
  const writes = (n: number): WriteOp[] => [
    { op: 'set', key: plain, value: `p${n}` },
    { op: 'increment', key: counter, by: 1 },
    { op: 'indexAdd', index: idx, member: `m${n}`, score: n },
  ];
  /** Everything compareAndSwapWith may have written, to compare before and after. */
  const snapshot = async () => ({
    doc: await ctx.store.getVersioned(cas),
    values: await ctx.store.getMany([plain, counter]),
    index: await ctx.store.indexRange(idx, { limit: 100 }),
  });

  describe('compareAndSwapWith', () => {
    it('applies the swap and its writes together', async () => {
      expect(await ctx.store.compareAndSwapWith(cas, 0, 'v1', writes(1))).toEqual({ ok: true, version: 1 });
      expect(await ctx.store.compareAndSwapWith(cas, 1, 'v2', writes(2))).toEqual({ ok: true, version: 2 });
      expect(await snapshot()).toEqual({
        doc: { value: 'v2', version: 2 },
        values: ['p2', '2'],
        index: [
          { member: 'm1', score: 1 },
          { member: 'm2', score: 2 },
        ],
      });
    });

    it('writes nothing when the versions differ, reporting the current version', async () => {
      expect(await ctx.store.compareAndSwapWith(cas, 3, 'x', writes(9))).toEqual({ ok: false, version: 0 });
      expect(await snapshot()).toEqual({ doc: null, values: [null, null], index: [] });
      await ctx.store.compareAndSwapWith(cas, 0, 'v1', writes(1));
      const before = await snapshot();
      expect(await ctx.store.compareAndSwapWith(cas, 0, 'again', writes(8))).toEqual({ ok: false, version: 1 });
      expect(await ctx.store.compareAndSwapWith(cas, 2, 'future', writes(7))).toEqual({ ok: false, version: 1 });
      expect(await snapshot()).toEqual(before);
    });

    it('shares versions with compareAndSwap and behaves like it without writes', async () => {
      expect(await ctx.store.compareAndSwap(cas, 0, 'v1')).toEqual({ ok: true, version: 1 });
      expect(await ctx.store.compareAndSwapWith(cas, 1, 'v2', [])).toEqual({ ok: true, version: 2 });
      expect(await ctx.store.compareAndSwap(cas, 2, 'v3')).toEqual({ ok: true, version: 3 });
      expect(await ctx.store.compareAndSwapWith(cas, 2, 'stale', [])).toEqual({ ok: false, version: 3 });
      expect(await ctx.store.getVersioned(cas)).toEqual({ value: 'v3', version: 3 });
      expect(await ctx.store.delete(cas)).toBe(true);
      expect(await ctx.store.compareAndSwapWith(cas, 0, 'fresh', [])).toEqual({ ok: true, version: 1 });
    });

    it('stores the versioned value without expiry, removing an earlier TTL', async () => {
      await ctx.store.compareAndSwap(cas, 0, 'v1', { ttlMs: ctx.unit });
      await ctx.store.compareAndSwapWith(cas, 1, 'v2', []);
      await ctx.h.advance(2 * ctx.unit);
      expect(await ctx.store.getVersioned(cas)).toEqual({ value: 'v2', version: 2 });
    });

    it('follows the WriteOp TTL rules', async () => {
      await ctx.store.compareAndSwapWith(cas, 0, 'v1', [
        { op: 'increment', key: counter, by: 1, ttlMs: 2 * ctx.unit },
        { op: 'indexAdd', index: idx, member: 'a', score: 1, ttlMs: 2 * ctx.unit },
        { op: 'set', key: plain, value: 'p', ttlMs: 10 * ctx.unit },
      ]);
      await ctx.h.advance(ctx.unit);
      await ctx.store.compareAndSwapWith(cas, 1, 'v2', [
        { op: 'increment', key: counter, by: 1, ttlMs: 10 * ctx.unit },
        { op: 'indexAdd', index: idx, member: 'b', score: 2, ttlMs: 10 * ctx.unit },
        { op: 'set', key: plain, value: 'p2', ttlMs: ctx.unit },
      ]);
      expect(await ctx.store.get(counter)).toBe('2');
      await ctx.h.advance(1.5 * ctx.unit);
      expect(await snapshot()).toEqual({ doc: { value: 'v2', version: 2 }, values: [null, null], index: [] });
    });

    it('rejects writes outside the key’s namespace and tenant, writing nothing', async () => {
      const otherTenant = key('cw', 'count', 'ns', 't2');
      const otherNs = key('cw', 'count', 'ns2', 't1');
      await expect(ctx.store.compareAndSwapWith(cas, 0, 'v1', [...writes(1), { op: 'increment', key: otherTenant, by: 1 }])).rejects.toThrow(RangeError);
      await expect(ctx.store.compareAndSwapWith(cas, 0, 'v1', [{ op: 'indexAdd', index: otherNs, member: 'm', score: 1 }])).rejects.toThrow(RangeError);
      await expect(ctx.store.compareAndSwapWith(cas, 0, 'v1', [{ op: 'set', key: plain, value: 'x', ttlMs: 0 }])).rejects.toThrow(RangeError);
      expect(await snapshot()).toEqual({ doc: null, values: [null, null], index: [] });
      expect(await ctx.store.getMany([otherTenant, otherNs])).toEqual([null, null]);
    });

    it('writes nothing when one of its writes cannot be applied', async () => {
      await ctx.store.set(counter, 'not a number');
      await expect(ctx.store.compareAndSwapWith(cas, 0, 'v1', writes(1))).rejects.toThrow(/not an integer/);
      expect(await snapshot()).toEqual({ doc: null, values: [null, 'not a number'], index: [] });
      await ctx.store.delete(counter);
      await ctx.store.set(idx, 'a plain value');
      await expect(ctx.store.compareAndSwapWith(cas, 0, 'v1', writes(1))).rejects.toThrow(/WRONGTYPE/);
      expect(await ctx.store.getVersioned(cas)).toBeNull();
      expect(await ctx.store.getMany([plain, counter, idx])).toEqual([null, null, 'a plain value']);
    });

    it('lets exactly one of 20 concurrent writers from the same version apply its writes', async () => {
      await ctx.store.compareAndSwapWith(cas, 0, 'base', []);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ctx.store.compareAndSwapWith(cas, 1, `w${i}`, writes(i))));
      const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
      expect(winners).toHaveLength(1);
      expect(results.every((r) => r.version === 2)).toBe(true);
      const w = winners[0] ?? -1;
      expect(await snapshot()).toEqual({
        doc: { value: `w${w}`, version: 2 },
        values: [`p${w}`, '1'],
        index: [{ member: `m${w}`, score: w }],
      });
    });
  });
}
