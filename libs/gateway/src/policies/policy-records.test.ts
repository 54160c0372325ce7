import { ManualClock, type QuotaPolicy, type RetentionPolicy } from '@sluice/core';
import type { RecordRepository, StateStore } from '@sluice/state';
import { describe, expect, it } from 'vitest';
import { racingStore } from '../../../../test/support/racing-store.js';
import { STATE_BACKENDS, stateStores } from '../../../../test/support/state-backends.js';
import { quotaRecords } from '../quotas/quota-records.js';
import { retentionRecords } from '../retention/retention-records.js';

/*
 * The quota and retention policy records: one suite, both kinds, both backends. Each kind is the
 * shared RecordRepository configured as "one policy per (namespace, tenant), ids unique".
 */

const quota = (id: string, over: Partial<QuotaPolicy> = {}): QuotaPolicy => ({
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

const retention = (id: string, over: Partial<RetentionPolicy> = {}): RetentionPolicy => ({
  id,
  namespace: 'ns',
  tenant: 't',
  enabled: true,
  compliance_hold: false,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  ...over,
});

interface Kind<T extends QuotaPolicy | RetentionPolicy> {
  name: string;
  records(state: StateStore, clock: ManualClock): RecordRepository<T>;
  policy(id: string, over?: Partial<T>): T;
  /** A field an update may change, and two values of it. */
  edit: { a: (p: T) => T; b: (p: T) => T; check: Partial<T> };
}

const log = { warn: () => {}, error: () => {} };
const reload = async () => {};
const quotaKind: Kind<QuotaPolicy> = {
  name: 'quota',
  records: (state, clock) => quotaRecords({ state, clock, log, reload }),
  policy: quota,
  edit: { a: (p) => ({ ...p, max_actions: 7 }), b: (p) => ({ ...p, enabled: false }), check: { max_actions: 7, enabled: false } },
};
const retentionKind: Kind<RetentionPolicy> = {
  name: 'retention',
  records: (state, clock) => retentionRecords({ state, clock, log, reload }),
  policy: retention,
  edit: { a: (p) => ({ ...p, compliance_hold: true }), b: (p) => ({ ...p, enabled: false }), check: { compliance_hold: true, enabled: false } },
};

const stores = stateStores();

describe.each(STATE_BACKENDS)('policy records (%s)', (backend) => {
  for (const kind of [quotaKind, retentionKind] as Kind<QuotaPolicy | RetentionPolicy>[]) {
    describe(`${kind.name} policies`, () => {
      const clock = new ManualClock(Date.UTC(2026, 2, 5, 14, 30));
      const policy = kind.policy;
      const fresh = async () => {
        const [state] = await stores.open(backend, { clock });
        return state!;
      };
      const ids = async (records: RecordRepository<QuotaPolicy | RetentionPolicy>) => (await records.listAll()).records.map((s) => s.record.id).sort();

      it('one policy per pair and per id, releasing what a refused create claimed', async () => {
        const records = kind.records(await fresh(), clock);
        expect(await records.create(policy('a'))).toBe('created');
        expect(await records.create(policy('b'))).toBe('unique-taken');
        expect(await records.create(policy('a', { tenant: 'u' }))).toBe('id-taken');
        // The refused create released "b".
        expect(await records.create(policy('b', { tenant: 'u' }))).toBe('created');
        expect(await ids(records)).toEqual(['a', 'b']);
      });

      it('a create racing another create of the pair: one wins', async () => {
        const state = await fresh();
        const other = kind.records(state, clock);
        const { store, beforeNext } = racingStore(state);
        let theirs: string | undefined;
        beforeNext(async () => (theirs = await other.create(policy('first'))));
        const ours = await kind.records(store, clock).create(policy('second'));
        expect([ours, theirs].sort()).toEqual(['created', 'unique-taken']);
        expect(await ids(other)).toEqual([ours === 'created' ? 'second' : 'first']);
      });

      it('an update racing a delete does not resurrect the policy', async () => {
        const state = await fresh();
        const other = kind.records(state, clock);
        const { store, beforeNext } = racingStore(state);
        await other.create(policy('p'));
        beforeNext(() => other.remove('p'));
        expect(await kind.records(store, clock).update('p', kind.edit.a)).toBeNull();
        expect(await ids(other)).toEqual([]);
      });

      it('an update racing a delete and a new create for the pair leaves the new policy alone', async () => {
        const state = await fresh();
        const other = kind.records(state, clock);
        const { store, beforeNext } = racingStore(state);
        await other.create(policy('old'));
        beforeNext(async () => {
          await other.remove('old');
          await other.create(policy('new', { enabled: false }));
        });
        expect(await kind.records(store, clock).update('old', kind.edit.a)).toBeNull();
        expect((await other.listAll()).records.map((s) => s.record)).toEqual([policy('new', { enabled: false })]);
      });

      it('concurrent updates are not lost', async () => {
        const state = await fresh();
        const other = kind.records(state, clock);
        const { store, beforeNext } = racingStore(state);
        await other.create(policy('p'));
        beforeNext(() => other.update('p', kind.edit.b));
        await kind.records(store, clock).update('p', kind.edit.a);
        expect((await other.find('p'))?.record).toMatchObject(kind.edit.check);
      });

      it('a delete racing an update still deletes', async () => {
        const state = await fresh();
        const other = kind.records(state, clock);
        const { store, beforeNext } = racingStore(state);
        await other.create(policy('p'));
        beforeNext(() => other.update('p', kind.edit.b));
        expect(await kind.records(store, clock).remove('p')).toBe(true);
        expect(await ids(other)).toEqual([]);
      });

      it('frees the pair and the id on delete, and a new policy may take the pair', async () => {
        const records = kind.records(await fresh(), clock);
        await records.create(policy('p'));
        expect(await records.remove('p')).toBe(true);
        expect(await records.remove('p')).toBe(false);
        expect(await records.find('p')).toBeNull();
        expect(await records.create(policy('q'))).toBe('created');
        expect(await records.create(policy('p', { tenant: 'u' }))).toBe('created');
        expect(await ids(records)).toEqual(['p', 'q']);
      });

      it('lists only complete, readable policies, naming unreadable ones', async () => {
        const state = await fresh();
        const records = kind.records(state, clock);
        await records.create(policy('ok'));
        // A create in flight (or dead): its id claimed and listed, no record yet.
        await state.indexAdd(records.keys.idClaim({ namespace: 'ns', tenant: 'nowhere', id: 'pending' }, true), JSON.stringify(['ns', 'nowhere']), clock.now());
        await state.indexAdd(records.keys.all, JSON.stringify(['ns', 'nowhere', 'pending']), clock.now());
        await records.create(policy('broken', { tenant: 'broken' }));
        await state.compareAndSwap(records.keys.record({ namespace: 'ns', tenant: 'broken', id: 'broken' }), 1, '{not json');
        const listed = await records.listAll();
        expect(listed.records.map((s) => [s.record, s.version])).toEqual([[policy('ok'), 1]]);
        expect(listed.bad).toEqual([{ namespace: 'ns', tenant: 'broken', id: 'broken' }]);
      });
    });
  }
});
