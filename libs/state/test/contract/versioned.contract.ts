import { describe, expect, it } from 'vitest';
import { key, type ContractContext } from './harness.js';

export function versionedContract(ctx: ContractContext): void {
  describe('versioned values (compare-and-swap)', () => {
    it('creates at version 1 only from expected version 0', async () => {
      const k = key('ver', 'a');
      expect(await ctx.store.getVersioned(k)).toBeNull();
      expect(await ctx.store.compareAndSwap(k, 3, 'x')).toEqual({ ok: false, version: 0 });
      expect(await ctx.store.compareAndSwap(k, 0, 'v1')).toEqual({ ok: true, version: 1 });
      expect(await ctx.store.getVersioned(k)).toEqual({ value: 'v1', version: 1 });
      expect(await ctx.store.compareAndSwap(k, 0, 'again')).toEqual({ ok: false, version: 1 });
    });

    it('increments the version and refuses stale writers, reporting the current version', async () => {
      const k = key('ver', 'b');
      await ctx.store.compareAndSwap(k, 0, 'v1');
      expect(await ctx.store.compareAndSwap(k, 1, 'v2')).toEqual({ ok: true, version: 2 });
      expect(await ctx.store.compareAndSwap(k, 1, 'stale')).toEqual({ ok: false, version: 2 });
      expect(await ctx.store.compareAndSwap(k, 7, 'future')).toEqual({ ok: false, version: 2 });
      expect(await ctx.store.getVersioned(k)).toEqual({ value: 'v2', version: 2 });
    });

    it('expires with its TTL, after which version 0 creates it afresh', async () => {
      const k = key('ver', 'ttl');
      await ctx.store.compareAndSwap(k, 0, 'v1', { ttlMs: 2 * ctx.unit });
      await ctx.h.advance(ctx.unit);
      expect(await ctx.store.getVersioned(k)).toEqual({ value: 'v1', version: 1 });
      await ctx.h.advance(2 * ctx.unit);
      expect(await ctx.store.getVersioned(k)).toBeNull();
      expect(await ctx.store.compareAndSwap(k, 0, 'new')).toEqual({ ok: true, version: 1 });
    });

    it('a write without TTL removes an earlier TTL', async () => {
      const k = key('ver', 'persist');
      await ctx.store.compareAndSwap(k, 0, 'v1', { ttlMs: 2 * ctx.unit });
      await ctx.store.compareAndSwap(k, 1, 'v2');
      await ctx.h.advance(3 * ctx.unit);
      expect(await ctx.store.getVersioned(k)).toEqual({ value: 'v2', version: 2 });
    });

    it('lets exactly one of 20 concurrent writers from the same version win', async () => {
      const k = key('ver', 'race');
      await ctx.store.compareAndSwap(k, 0, 'base');
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ctx.store.compareAndSwap(k, 1, `w${i}`)));
      const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
      expect(winners).toHaveLength(1);
      expect(results.every((r) => r.version === 2)).toBe(true);
      expect(await ctx.store.getVersioned(k)).toEqual({ value: `w${winners[0]}`, version: 2 });
    });

    it('is deleted like any key', async () => {
      const k = key('ver', 'del');
      await ctx.store.compareAndSwap(k, 0, 'v1');
      expect(await ctx.store.delete(k)).toBe(true);
      expect(await ctx.store.getVersioned(k)).toBeNull();
      expect(await ctx.store.compareAndSwap(k, 0, 'v1')).toEqual({ ok: true, version: 1 });
    });
  });
}
