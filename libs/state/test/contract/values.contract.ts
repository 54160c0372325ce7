import { describe, expect, it } from 'vitest';
import { key, type ContractContext } from './harness.js';

export function valuesContract(ctx: ContractContext): void {
  describe('plain values', () => {
    it('gets, overwrites and deletes', async () => {
      const k = key('val', 'a');
      expect(await ctx.store.get(k)).toBeNull();
      await ctx.store.set(k, 'one');
      expect(await ctx.store.get(k)).toBe('one');
      await ctx.store.set(k, 'two');
      expect(await ctx.store.get(k)).toBe('two');
      expect(await ctx.store.delete(k)).toBe(true);
      expect(await ctx.store.delete(k)).toBe(false);
      expect(await ctx.store.get(k)).toBeNull();
    });

    it('keeps keys of different scopes apart', async () => {
      await ctx.store.set(key('val', 'x', 'ns', 't1'), 'a');
      await ctx.store.set(key('val', 'x', 'ns', 't2'), 'b');
      await ctx.store.set(key('val', 'x', 'ns2', 't1'), 'c');
      await ctx.store.set(key('other', 'x', 'ns', 't1'), 'd');
      expect(await ctx.store.get(key('val', 'x', 'ns', 't1'))).toBe('a');
      expect(await ctx.store.get(key('val', 'x', 'ns', 't2'))).toBe('b');
      expect(await ctx.store.get(key('val', 'x', 'ns2', 't1'))).toBe('c');
      expect(await ctx.store.get(key('other', 'x', 'ns', 't1'))).toBe('d');
    });

    it('expires a value after its TTL', async () => {
      const k = key('val', 'ttl');
      await ctx.store.set(k, 'v', { ttlMs: 2 * ctx.unit });
      await ctx.h.advance(ctx.unit);
      expect(await ctx.store.get(k)).toBe('v');
      await ctx.h.advance(2 * ctx.unit);
      expect(await ctx.store.get(k)).toBeNull();
      expect(await ctx.store.delete(k)).toBe(false);
    });

    it('a write without TTL removes an earlier TTL', async () => {
      const k = key('val', 'persist');
      await ctx.store.set(k, 'v1', { ttlMs: 2 * ctx.unit });
      await ctx.store.set(k, 'v2');
      await ctx.h.advance(3 * ctx.unit);
      expect(await ctx.store.get(k)).toBe('v2');
    });

    it('rejects a TTL that is not positive', async () => {
      await expect(ctx.store.set(key('val', 'bad'), 'v', { ttlMs: 0 })).rejects.toThrow(RangeError);
      await expect(ctx.store.setIfAbsent(key('val', 'bad'), 'v', { ttlMs: -5 })).rejects.toThrow(RangeError);
      expect(await ctx.store.get(key('val', 'bad'))).toBeNull();
    });

    it('values keep any string', async () => {
      const k = key('val', 'unicode');
      const value = `ä:{x}%20 \n "quoted" 🚀 ${'z'.repeat(10_000)}`;
      await ctx.store.set(k, value);
      expect(await ctx.store.get(k)).toBe(value);
      await ctx.store.set(k, '');
      expect(await ctx.store.get(k)).toBe('');
    });
  });

  describe('setIfAbsent', () => {
    it('writes only the first time', async () => {
      const k = key('lock', 'a');
      expect(await ctx.store.setIfAbsent(k, 'first')).toBe(true);
      expect(await ctx.store.setIfAbsent(k, 'second')).toBe(false);
      expect(await ctx.store.get(k)).toBe('first');
      expect(await ctx.store.delete(k)).toBe(true);
      expect(await ctx.store.setIfAbsent(k, 'third')).toBe(true);
      expect(await ctx.store.get(k)).toBe('third');
    });

    it('can be re-acquired once its TTL has passed', async () => {
      const k = key('lock', 'ttl');
      expect(await ctx.store.setIfAbsent(k, 'a', { ttlMs: 2 * ctx.unit })).toBe(true);
      await ctx.h.advance(ctx.unit);
      expect(await ctx.store.setIfAbsent(k, 'b', { ttlMs: 2 * ctx.unit })).toBe(false);
      expect(await ctx.store.get(k)).toBe('a');
      await ctx.h.advance(2 * ctx.unit);
      expect(await ctx.store.setIfAbsent(k, 'c', { ttlMs: 2 * ctx.unit })).toBe(true);
      expect(await ctx.store.get(k)).toBe('c');
    });

    it('has exactly one winner among 20 concurrent calls', async () => {
      const k = key('lock', 'race');
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ctx.store.setIfAbsent(k, `w${i}`)));
      const winners = results.flatMap((won, i) => (won ? [i] : []));
      expect(winners).toHaveLength(1);
      expect(await ctx.store.get(k)).toBe(`w${winners[0]}`);
    });
  });

  describe('deleteIfValue', () => {
    it('deletes only while the key holds the given value', async () => {
      const k = key('lock', 'give-back');
      await ctx.store.set(k, 'mine');
      expect(await ctx.store.deleteIfValue(k, 'theirs')).toBe(false);
      expect(await ctx.store.get(k)).toBe('mine');
      expect(await ctx.store.deleteIfValue(k, 'mine')).toBe(true);
      expect(await ctx.store.get(k)).toBeNull();
      expect(await ctx.store.deleteIfValue(k, 'mine')).toBe(false);
    });
  });

  describe('ping and close', () => {
    it('answers ping while open and false (not a throw) after close', async () => {
      expect(await ctx.store.ping()).toBe(true);
      await ctx.store.close();
      expect(await ctx.store.ping()).toBe(false);
    });
  });
}
