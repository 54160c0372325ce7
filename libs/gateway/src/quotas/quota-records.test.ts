import type { QuotaPolicy } from '@sluice/core';
import { MemoryStateStore, type StateStore } from '@sluice/state';
import { describe, expect, it } from 'vitest';
import { policyIdKey, policyKey, scopeId } from './quota-keys.js';
import { QuotaRecords } from './quota-records.js';

const policy = (id: string, over: Partial<QuotaPolicy> = {}): QuotaPolicy => ({
  id,
  namespace: 'ns',
  tenant: 't',
  max_actions: 1,
  window: 'daily',
  overage_behavior: 'block',
  enabled: true,
  source: 'api',
  ...over,
});

const ids = async (records: QuotaRecords) => (await records.readAll()).policies.map((p) => p.id).sort();

/**
 * A view of `state` whose next compareAndSwap first runs `other` (once armed): a deterministic
 * stand-in for another replica's request landing between a read and its compare-and-swap.
 */
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

describe('QuotaRecords', () => {
  it('one policy per pair and per id', async () => {
    const records = new QuotaRecords(new MemoryStateStore());
    expect(await records.create(policy('a'))).toBe('created');
    expect(await records.create(policy('b'))).toBe('scope-taken');
    expect(await records.create(policy('a', { tenant: 'u' }))).toBe('id-taken');
    // The refused create released "b".
    expect(await records.create(policy('b', { tenant: 'u' }))).toBe('created');
    expect(await ids(records)).toEqual(['a', 'b']);
  });

  it('an update racing a delete does not resurrect the policy', async () => {
    const state = new MemoryStateStore();
    const other = new QuotaRecords(state);
    const { store, beforeNextCas } = racing(state);
    await other.create(policy('p'));
    beforeNextCas(() => other.remove('p'));
    expect(await new QuotaRecords(store).update('p', (p) => ({ ...p, max_actions: 9 }))).toBeNull();
    expect(await ids(other)).toEqual([]);
  });

  it('an update racing a delete and a new create for the pair leaves the new policy alone', async () => {
    const state = new MemoryStateStore();
    const other = new QuotaRecords(state);
    const { store, beforeNextCas } = racing(state);
    await other.create(policy('old'));
    beforeNextCas(async () => {
      await other.remove('old');
      await other.create(policy('new', { max_actions: 5 }));
    });
    expect(await new QuotaRecords(store).update('old', (p) => ({ ...p, max_actions: 9 }))).toBeNull();
    expect((await other.readAll()).policies).toEqual([policy('new', { max_actions: 5 })]);
  });

  it('concurrent updates are not lost', async () => {
    const state = new MemoryStateStore();
    const other = new QuotaRecords(state);
    const { store, beforeNextCas } = racing(state);
    await other.create(policy('p'));
    beforeNextCas(() => other.update('p', (q) => ({ ...q, enabled: false })));
    await new QuotaRecords(store).update('p', (p) => ({ ...p, max_actions: 7 }));
    expect(await other.read('p')).toMatchObject({ max_actions: 7, enabled: false });
  });

  it('a delete racing an update still deletes', async () => {
    const state = new MemoryStateStore();
    const other = new QuotaRecords(state);
    const { store, beforeNextCas } = racing(state);
    await other.create(policy('p'));
    beforeNextCas(() => other.update('p', (q) => ({ ...q, enabled: false })));
    expect(await new QuotaRecords(store).remove('p')).toBe(true);
    expect(await ids(other)).toEqual([]);
  });

  it('frees the pair and the id on delete', async () => {
    const records = new QuotaRecords(new MemoryStateStore());
    await records.create(policy('p'));
    expect(await records.remove('p')).toBe(true);
    expect(await records.remove('p')).toBe(false);
    expect(await records.read('p')).toBeNull();
    expect(await records.create(policy('q'))).toBe('created');
    expect(await records.create(policy('p', { tenant: 'u' }))).toBe('created');
  });

  it('lists only complete, readable policies, naming unreadable ones', async () => {
    const state = new MemoryStateStore();
    const records = new QuotaRecords(state);
    await records.create(policy('ok'));
    // A reservation whose record was never written (a create in flight, or a crash).
    await state.set(policyIdKey('pending'), scopeId('ns', 'nowhere'));
    await state.set(policyIdKey('broken'), scopeId('ns', 'broken'));
    await state.compareAndSwap(policyKey(scopeId('ns', 'broken')), 0, '{not json');
    expect(await records.readAll()).toEqual({ policies: [policy('ok')], bad: [scopeId('ns', 'broken')] });
  });
});
