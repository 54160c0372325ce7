import { describe, expect, it } from 'vitest';
import { expectWithin, key, type ContractContext } from './harness.js';

export function windowContract(ctx: ContractContext): void {
  describe('window counters', () => {
    it('opens a window on the first hit and anchors it there', async () => {
      const k = key('win', 'anchor');
      const windowMs = 4 * ctx.unit;
      const start = ctx.h.now();
      const first = await ctx.store.incrementWindow(k, { windowMs });
      expect(first).toMatchObject({ count: 1, allowed: true });
      expectWithin(first.resetAtMs, start + windowMs, ctx.tol);
      await ctx.h.advance(ctx.unit);
      const second = await ctx.store.incrementWindow(k, { windowMs });
      expect(second.count).toBe(2);
      expectWithin(second.resetAtMs, first.resetAtMs, ctx.tol);
      const read = await ctx.store.readWindow(k);
      expect(read.count).toBe(2);
      expectWithin(read.resetAtMs ?? NaN, first.resetAtMs, ctx.tol);
    });

    it('reads count 0 and no reset time when no window is open', async () => {
      expect(await ctx.store.readWindow(key('win', 'none'))).toEqual({ count: 0, resetAtMs: null });
    });

    it('refuses above the limit without counting', async () => {
      const k = key('win', 'limit');
      const opts = { windowMs: 4 * ctx.unit, limit: 3 };
      const results = [];
      for (let i = 0; i < 5; i++) results.push(await ctx.store.incrementWindow(k, opts));
      expect(results.map((r) => [r.count, r.allowed])).toEqual([
        [1, true],
        [2, true],
        [3, true],
        [3, false],
        [3, false],
      ]);
      expect((await ctx.store.readWindow(k)).count).toBe(3);
    });

    it('adds `by` and refuses an increment that would overshoot', async () => {
      const k = key('win', 'by');
      const windowMs = 4 * ctx.unit;
      expect(await ctx.store.incrementWindow(k, { windowMs, limit: 7, by: 5 })).toMatchObject({ count: 5, allowed: true });
      expect(await ctx.store.incrementWindow(k, { windowMs, limit: 7, by: 5 })).toMatchObject({ count: 5, allowed: false });
      expect(await ctx.store.incrementWindow(k, { windowMs, limit: 7, by: 2 })).toMatchObject({ count: 7, allowed: true });
    });

    it('a refusal on an absent counter opens no window', async () => {
      const k = key('win', 'zero');
      const start = ctx.h.now();
      const r = await ctx.store.incrementWindow(k, { windowMs: 2 * ctx.unit, limit: 0 });
      expect(r).toMatchObject({ count: 0, allowed: false });
      // Nothing is open: the reset time is where a window opened now would end.
      expectWithin(r.resetAtMs, start + 2 * ctx.unit, ctx.tol);
      expect(await ctx.store.readWindow(k)).toEqual({ count: 0, resetAtMs: null });
    });

    it('refused attempts do not extend the window, and it resets after expiry', async () => {
      const k = key('win', 'reset');
      const opts = { windowMs: 2 * ctx.unit, limit: 1 };
      const first = await ctx.store.incrementWindow(k, opts);
      await ctx.h.advance(ctx.unit);
      const refused = await ctx.store.incrementWindow(k, opts);
      expect(refused).toMatchObject({ count: 1, allowed: false });
      expectWithin(refused.resetAtMs, first.resetAtMs, ctx.tol);
      await ctx.h.advance(1.5 * ctx.unit);
      expect(await ctx.store.readWindow(k)).toEqual({ count: 0, resetAtMs: null });
      const fresh = await ctx.store.incrementWindow(k, opts);
      expect(fresh).toMatchObject({ count: 1, allowed: true });
      expect(fresh.resetAtMs).toBeGreaterThan(first.resetAtMs);
    });

    it('applies a call naming a window only to that window: not after it ended, nor to one opened since', async () => {
      const k = key('win', 'named');
      const windowMs = 2 * ctx.unit;
      const first = await ctx.store.incrementWindow(k, { windowMs, by: 3 });
      expect(await ctx.store.incrementWindow(k, { windowMs, by: -1, windowEndsAtMs: first.resetAtMs })).toMatchObject({ count: 2, allowed: true });
      await ctx.h.advance(2.5 * ctx.unit);
      expect(await ctx.store.incrementWindow(k, { windowMs, by: -2, windowEndsAtMs: first.resetAtMs })).toMatchObject({ count: 0, allowed: false });
      expect(await ctx.store.readWindow(k)).toEqual({ count: 0, resetAtMs: null });
      const second = await ctx.store.incrementWindow(k, { windowMs });
      expect(await ctx.store.incrementWindow(k, { windowMs, by: -2, windowEndsAtMs: first.resetAtMs })).toMatchObject({ count: 1, allowed: false });
      expect(await ctx.store.incrementWindow(k, { windowMs, by: -1, windowEndsAtMs: second.resetAtMs })).toMatchObject({ count: 0, allowed: true });
    });

    it('allows exactly `limit` of 50 concurrent increments', async () => {
      const k = key('win', 'race');
      const results = await Promise.all(Array.from({ length: 50 }, () => ctx.store.incrementWindow(k, { windowMs: 10 * ctx.unit, limit: 10 })));
      const allowed = results.filter((r) => r.allowed);
      expect(allowed).toHaveLength(10);
      expect(allowed.map((r) => r.count).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect((await ctx.store.readWindow(k)).count).toBe(10);
    });

    it('is deleted like any key', async () => {
      const k = key('win', 'del');
      await ctx.store.incrementWindow(k, { windowMs: 4 * ctx.unit });
      expect(await ctx.store.delete(k)).toBe(true);
      expect(await ctx.store.readWindow(k)).toEqual({ count: 0, resetAtMs: null });
      expect((await ctx.store.incrementWindow(k, { windowMs: 4 * ctx.unit })).count).toBe(1);
    });

    it('rejects a window that is not positive', async () => {
      await expect(ctx.store.incrementWindow(key('win', 'bad'), { windowMs: 0 })).rejects.toThrow(RangeError);
    });
  });
}
