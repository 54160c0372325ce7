import type { RetentionPolicy } from '@sluice/core';
import { MemoryStateStore, type StateStore } from '@sluice/state';
import { describe, expect, it } from 'vitest';
import { pairId, policyIdKey, policyKey } from './retention-keys.js';
import { RetentionRecords } from './retention-records.js';

const policy = (id: string, over: Partial<RetentionPolicy> = {}): RetentionPolicy => ({
  id,
  namespace: 'ns',
  tenant: 't',
  enabled: true,
  compliance_hold: false,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  ...over,
});

const ids = async (records: RetentionRecords) => (await records.readAll()).policies.map((p) => p.id).sort();

/** A view of `state` whose next compareAndSwap first runs `other`: another replica landing between a read and its CAS. */
function racing(state: MemoryStateStore) {
  let pending: (() => Promise<unknown>) | null = null;
  const store = new Proxy(state, {
    get(target, prop) {
      if (prop === 'compareAndSwap') {
        return async (...args: Parameters<StateStore['compareAndSwap']>) => {
          const other = pending;
          pending = null;
          if (other) await other();
          return target.compareAndSwap(...args);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store, beforeNextCas: (other: () => Promise<unknown>) => void (pending = other) };
}

describe('RetentionRecords', () => {
  it('keeps one policy per pair and per id, releasing the id of a refused create', async () => {
    const records = new RetentionRecords(new MemoryStateStore());
    expect(await records.create(policy('a'))).toBe('created');
    expect(await records.create(policy('b'))).toBe('pair-taken');
    expect(await records.create(policy('a', { tenant: 'u' }))).toBe('id-taken');
    expect(await records.create(policy('b', { tenant: 'u' }))).toBe('created');
    expect(await ids(records)).toEqual(['a', 'b']);
  });

  it('a create racing another create of the pair loses', async () => {
    const state = new MemoryStateStore();
    const other = new RetentionRecords(state);
    const { store, beforeNextCas } = racing(state);
    beforeNextCas(() => other.create(policy('first')));
    expect(await new RetentionRecords(store).create(policy('second'))).toBe('pair-taken');
    expect(await ids(other)).toEqual(['first']);
  });

  it('an update racing a delete does not resurrect the policy', async () => {
    const state = new MemoryStateStore();
    const other = new RetentionRecords(state);
    const { store, beforeNextCas } = racing(state);
    await other.create(policy('p'));
    beforeNextCas(() => other.remove('p'));
    expect(await new RetentionRecords(store).update('p', (p) => ({ ...p, compliance_hold: true }))).toBeNull();
    expect(await ids(other)).toEqual([]);
  });

  it('concurrent updates are not lost', async () => {
    const state = new MemoryStateStore();
    const other = new RetentionRecords(state);
    const { store, beforeNextCas } = racing(state);
    await other.create(policy('p'));
    beforeNextCas(() => other.update('p', (q) => ({ ...q, enabled: false })));
    await new RetentionRecords(store).update('p', (p) => ({ ...p, compliance_hold: true }));
    expect(await other.read('p')).toMatchObject({ compliance_hold: true, enabled: false });
  });

  it('frees the pair and the id on delete, and a new policy may take the pair', async () => {
    const records = new RetentionRecords(new MemoryStateStore());
    await records.create(policy('p'));
    expect(await records.remove('p')).toBe(true);
    expect(await records.remove('p')).toBe(false);
    expect(await records.read('p')).toBeNull();
    expect(await records.create(policy('q'))).toBe('created');
    expect(await ids(records)).toEqual(['q']);
  });

  it('lists only complete, readable policies, naming unreadable ones', async () => {
    const state = new MemoryStateStore();
    const records = new RetentionRecords(state);
    await records.create(policy('ok'));
    await state.set(policyIdKey('pending'), pairId('ns', 'nowhere'));
    await state.set(policyIdKey('broken'), pairId('ns', 'broken'));
    await state.compareAndSwap(policyKey(pairId('ns', 'broken')), 0, '{not json');
    expect(await records.readAll()).toEqual({ policies: [policy('ok')], bad: [pairId('ns', 'broken')] });
  });
});
