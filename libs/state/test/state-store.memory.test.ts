import { ManualClock } from '@sluice/core';
import { describe, expect, it } from 'vitest';
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

  it('fails loudly when used after close', async () => {
    const store = new MemoryStateStore();
    await store.close();
    await expect(store.get({ kind: 'v', namespace: 'n', tenant: 't', id: 'x' })).rejects.toThrow(/closed/);
  });
});
