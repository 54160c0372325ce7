import { describe, expect, it } from 'vitest';
import { poll } from '../../../../test/support/poll.js';
import type { ContractContext } from './harness.js';

export function pubsubContract(ctx: ContractContext): void {
  describe('pub/sub', () => {
    it('delivers to every subscriber of the channel, in publish order, and to no other channel', async () => {
      const a: string[] = [];
      const b: string[] = [];
      const other: string[] = [];
      await ctx.store.subscribe('events', (m) => a.push(m));
      await ctx.store.subscribe('events', (m) => b.push(m));
      await ctx.store.subscribe('events-2', (m) => other.push(m));
      for (let i = 0; i < 20; i++) await ctx.store.publish('events', `m${i}`);
      const want = Array.from({ length: 20 }, (_, i) => `m${i}`);
      await poll('20 messages on each subscriber', () => a.length === 20 && b.length === 20);
      expect(a).toEqual(want);
      expect(b).toEqual(want);
      expect(other).toEqual([]);
    });

    it('never calls a handler from inside publish', async () => {
      let delivered = false;
      await ctx.store.subscribe('async', () => {
        delivered = true;
      });
      const pending = ctx.store.publish('async', 'x');
      expect(delivered).toBe(false);
      await pending;
      await poll('the delivery', () => delivered);
    });

    it('stops delivering after unsubscribe, leaving other subscribers in place', async () => {
      const gone: string[] = [];
      const stays: string[] = [];
      const unsubscribe = await ctx.store.subscribe('chan', (m) => gone.push(m));
      await ctx.store.subscribe('chan', (m) => stays.push(m));
      await ctx.store.publish('chan', 'before');
      await poll('the first message on both', () => gone.length === 1 && stays.length === 1);
      await unsubscribe();
      await unsubscribe(); // idempotent
      await ctx.store.publish('chan', 'after');
      // The remaining subscriber is the barrier: once it has the message, the other would too.
      await poll('the second message', () => stays.length === 2);
      expect(gone).toEqual(['before']);
      expect(stays).toEqual(['before', 'after']);
    });

    it('delivers again after the last subscriber left and a new one came', async () => {
      const first: string[] = [];
      const second: string[] = [];
      const off = await ctx.store.subscribe('again', (m) => first.push(m));
      await off();
      await ctx.store.subscribe('again', (m) => second.push(m));
      await ctx.store.publish('again', 'x');
      await poll('the message to the new subscriber', () => second.length === 1);
      expect(first).toEqual([]);
    });

    it('publishing to a channel nobody listens to is fine', async () => {
      await expect(ctx.store.publish('nobody', 'x')).resolves.toBeUndefined();
    });
  });
}
