import { ManualClock } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { StateFullError } from '../src/memory/memory-keyspace.js';
import { MemoryStateStore } from '../src/memory/memory-state-store.js';
import { stateStoreContract } from './contract/state-store.contract.js';

stateStoreContract(
  'memory',
  async () => {
    const clock = new ManualClock();
    const store = new MemoryStateStore({ clock });
    return {
      store,
      advance: async (ms) => clock.advance(ms),
      now: () => clock.now(),
      cleanup: () => store.close(),
    };
  },
  { unitMs: 1000, toleranceMs: 0 },
);

// Memory-only behaviour: exact timing on the manual clock, and the sweep.
describe('MemoryStateStore', () => {
  it('expires a key exactly at its TTL and windows at resetAtMs', async () => {
    const clock = new ManualClock();
    const store = new MemoryStateStore({ clock });
    const k = { kind: 'v', namespace: 'n', tenant: 't', id: 'x' };
    await store.set(k, 'v', { ttlMs: 100 });
    clock.advance(99);
    expect(await store.get(k)).toBe('v');
    clock.advance(1);
    expect(await store.get(k)).toBeNull();
    const w = await store.incrementWindow(k, { windowMs: 50 });
    expect(w.resetAtMs).toBe(clock.now() + 50);
    clock.set(w.resetAtMs);
    expect(await store.readWindow(k)).toEqual({ count: 0, resetAtMs: null });
    await store.close();
  });

  it('sweeps expired keys nobody reads', async () => {
    const clock = new ManualClock();
    const store = new MemoryStateStore({ clock, sweepIntervalMs: 60_000 });
    for (let i = 0; i < 10; i++) await store.set({ kind: 'v', namespace: 'n', tenant: 't', id: `${i}` }, 'v', { ttlMs: 10 * (i + 1) });
    clock.advance(50);
    expect(store.sweep()).toBe(5);
    await store.close();
  });

  it('sweeps on its clock every sweepIntervalMs, and stops at close', async () => {
    const clock = new ManualClock();
    const store = new MemoryStateStore({ clock, sweepIntervalMs: 1000 });
    const fill = async (tag: string) => {
      for (let i = 0; i < 10; i++) await store.set({ kind: 'v', namespace: 'n', tenant: 't', id: `${tag}${i}` }, 'v', { ttlMs: 10 * (i + 1) });
    };
    await fill('a');
    clock.advance(999);
    expect(store.sweep()).toBe(10); // expired, but no periodic sweep yet
    await fill('b');
    clock.advance(1001);
    expect(store.sweep()).toBe(0); // the sweep at 2000 freed them
    expect(clock.pendingTimers).toBe(1);
    await store.close();
    expect(clock.pendingTimers).toBe(0);
  });

  it('counts the characters of the values it holds, by kind, through every way a value comes and goes', async () => {
    const clock = new ManualClock();
    const store = new MemoryStateStore({ clock, sweepIntervalMs: 60_000 });
    const key = (kind: string, id: string) => ({ kind, namespace: 'n', tenant: 't', id });
    await store.set(key('rec', 'a'), 'x'.repeat(100));
    await store.set(key('rec', 'b'), 'y'.repeat(50), { ttlMs: 10 });
    await store.set(key('other', 'c'), 'z'.repeat(7));
    expect(store.storedBytes('rec')).toBe(150);
    await store.set(key('rec', 'a'), 'x'.repeat(30)); // replaced
    expect(store.storedBytes('rec')).toBe(80);
    await store.writeBatch([
      { op: 'set', key: key('rec', 'd'), value: 'w'.repeat(20) },
      { op: 'increment', key: key('rec', 'n'), by: 9 }, // '9'
      { op: 'indexAdd', index: key('rec', 'i'), member: 'm'.repeat(40), score: 1 }, // sorted sets are not counted
    ]);
    await store.writeBatch([{ op: 'increment', key: key('rec', 'n'), by: 1 }]); // '10', in place
    expect(store.storedBytes('rec')).toBe(30 + 50 + 20 + 2);
    expect(await store.delete(key('rec', 'd'))).toBe(true);
    clock.advance(10);
    expect(await store.get(key('rec', 'b'))).toBeNull(); // expired on read
    expect(store.storedBytes('rec')).toBe(32);
    await store.set(key('rec', 'e'), 'v'.repeat(5), { ttlMs: 10 });
    clock.advance(10);
    expect(store.sweep()).toBe(1); // expired, freed by the sweep
    expect(store.storedBytesByKind()).toEqual(
      new Map([
        ['rec', 32],
        ['other', 7],
      ]),
    );
    await store.close();
  });

  describe('limits (state.memory_max_keys, memory_max_bytes)', () => {
    const key = (kind: string, id: string) => ({ kind, namespace: 'n', tenant: 't', id });
    const limited = (maxKeys: number, maxBytes: number, clock = new ManualClock()) =>
      new MemoryStateStore({ clock, sweepIntervalMs: 60_000, limits: { maxKeys, maxBytes, exemptKinds: ['audit'], drainKinds: ['outbox'] } });

    it('refuses a new key past max keys, changing nothing, and takes it again once a key is gone', async () => {
      const store = limited(3, 1000);
      for (const id of ['a', 'b', 'c']) await store.set(key('dedup', id), '1');
      await expect(store.set(key('dedup', 'd'), '1')).rejects.toThrow(/^OOM command not allowed/);
      await expect(store.setIfAbsent(key('dedup', 'd'), '1')).rejects.toMatchObject({ name: 'StateFullError' });
      await expect(store.indexAdd(key('group', 'i'), 'm', 1)).rejects.toThrow(StateFullError);
      expect(await store.get(key('dedup', 'd'))).toBeNull();
      // Existing keys still change, exempt kinds are not counted.
      await store.set(key('dedup', 'a'), '2');
      await store.writeBatch([{ op: 'increment', key: key('dedup', 'b'), by: 5 }]);
      await store.set(key('audit', 'r1'), 'x'.repeat(5000));
      await store.delete(key('dedup', 'c'));
      await store.set(key('dedup', 'd'), '1');
      expect(await store.get(key('dedup', 'd'))).toBe('1');
      await store.close();
    });

    it('refuses a value that would pass max bytes, but never one that shrinks what is held', async () => {
      const store = limited(100, 10);
      await store.set(key('v', 'a'), 'x'.repeat(8));
      await expect(store.set(key('v', 'b'), 'y'.repeat(3))).rejects.toThrow(StateFullError);
      await expect(store.set(key('v', 'a'), 'x'.repeat(11))).rejects.toThrow(StateFullError);
      expect(await store.get(key('v', 'a'))).toBe('x'.repeat(8));
      await store.set(key('v', 'a'), 'x'.repeat(2));
      await store.set(key('v', 'b'), 'y'.repeat(8));
      await store.close();
    });

    it('sweeps expired keys before refusing, so expiry makes room', async () => {
      const clock = new ManualClock();
      const store = limited(2, 1000, clock);
      await store.set(key('dedup', 'a'), '1', { ttlMs: 100 });
      await store.set(key('dedup', 'b'), '1', { ttlMs: 100 });
      clock.advance(100); // expired, not swept yet
      await store.set(key('dedup', 'c'), '1');
      await store.set(key('dedup', 'd'), '1');
      await expect(store.set(key('dedup', 'e'), '1')).rejects.toThrow(StateFullError);
      await store.close();
    });

    it('checks a compare-and-swap with its writes as a whole: all of it, or nothing', async () => {
      const store = limited(2, 1000);
      const head = key('chain', 'head');
      const writes = [
        { op: 'set' as const, key: key('chain', 'x'), value: 'v' },
        { op: 'set' as const, key: key('chain', 'y'), value: 'v' },
      ];
      await expect(store.compareAndSwapWith(head, 0, 'h', writes)).rejects.toThrow(StateFullError);
      expect(await store.getVersioned(head)).toBeNull();
      expect(await store.get(key('chain', 'x'))).toBeNull();
      expect(await store.compareAndSwapWith(head, 0, 'h', writes.slice(0, 1))).toEqual({ ok: true, version: 1 });
      await store.close();
    });

    it('lets a write of a drain kind (a flush outbox) past the limits by 5 % of them, so a full store can still drain', async () => {
      const store = limited(100, 1000);
      const group = key('group', 'g');
      const { version } = await store.compareAndSwapWith(group, 0, 'e'.repeat(990), []);
      // The claim: the record gives way to a small tombstone, the outbox takes its events and a little more.
      const claim = [{ op: 'set' as const, key: key('outbox', 'f'), value: 'e'.repeat(1030) }];
      await expect(store.compareAndSwapWith(key('group', 'other'), 0, 'x'.repeat(40), [])).rejects.toThrow(StateFullError);
      expect(await store.compareAndSwapWith(group, version, 't', claim)).toMatchObject({ ok: true });
      // Past the reserve, or without a drain kind, still refused.
      await expect(store.set(key('outbox', 'g'), 'e'.repeat(30))).rejects.toThrow(StateFullError);
      await expect(store.set(key('dedup', 'a'), '1')).rejects.toThrow(StateFullError);
      await store.close();
    });
  });

  it('fails loudly when used after close', async () => {
    const store = new MemoryStateStore();
    await store.close();
    await expect(store.get({ kind: 'v', namespace: 'n', tenant: 't', id: 'x' })).rejects.toThrow(/closed/);
  });
});
