import { AuditFilterFields, ManualClock, type AuditPage, type AuditRecord, type Clock } from '@sluice/core';
import type { StateKey, StateStore } from '@sluice/state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditStore, StoreQuery } from '../src/audit-store.js';
import { placementOf } from '../src/index-layout.js';
import { chainIndexKey, recordKey } from '../src/keys.js';
import { recordHash } from '../src/record-hash.js';
import { tenantMember } from '../src/record-ref.js';
import { StateAuditStore, type StateAuditStoreOptions } from '../src/state-audit-store.js';
import { draft, newestFirst, variedDraft } from './support/records.js';

/** What a backend's test file hands the contract: a fresh, empty StateStore per test. */
export interface AuditHarness {
  state: StateStore;
  /** Another StateStore over the same data: a second connection on Redis, the same store in memory. */
  connectAnother(): Promise<StateStore>;
  /** Deletes what the test wrote and closes every store. */
  cleanup(): Promise<void>;
  /** Where the records end up: the state store itself unless given (the PostgreSQL trail). */
  trail?: TrailUnderTest;
}

/** An audit store as the tests drive it. */
export type TestedStore = AuditStore & { catchUp(): Promise<boolean>; close(): Promise<void> };

/** How the records are kept, as the tests need to reach them. */
export interface TrailUnderTest {
  /**
   * 'state': records and indexes in the state store (a total only when one index answers the
   * filters; memory caps; index entries to inspect). 'table': a database table, which counts
   * every filter exactly.
   */
  kind: 'state' | 'table';
  open(state: StateStore, opts: { clock: Clock; scanBudget?: number; completeChains?: boolean }): TestedStore;
  /** Rewrites a stored record in place, as an attacker with access to the backend could. */
  rewrite(record: AuditRecord, change: Partial<AuditRecord>): Promise<void>;
  /** Deletes a stored record outright (from the chain's index too). */
  remove(record: AuditRecord): Promise<void>;
}

/** The state store's own trail (StateAuditStore). */
function stateTrail(state: StateStore): TrailUnderTest & { open(state: StateStore, opts: StateAuditStoreOptions): StateAuditStore } {
  return {
    kind: 'state',
    open: (on, opts) => new StateAuditStore(on, opts),
    async rewrite(record, change) {
      const key = recordKey(record, record.id);
      const stored = JSON.parse((await state.get(key)) ?? 'null') as AuditRecord;
      await state.set(key, JSON.stringify({ ...stored, ...change }));
    },
    async remove(record) {
      await state.delete(recordKey(record, record.id));
      await state.indexRemove(chainIndexKey(record), tenantMember(record.id));
    },
  };
}

const BASE = Date.UTC(2026, 0, 1);
const NOW = BASE + 86_400_000;

type Query = Partial<StoreQuery>;

/** `kind`: the trail the harness brings ('state' when it brings none); tests of one kind's internals run on it only. */
export function auditStoreContract(backend: string, makeHarness: () => Promise<AuditHarness>, kind: TrailUnderTest['kind'] = 'state'): void {
  const onState = kind === 'state';
  describe(`audit store on ${backend}`, () => {
    let h: AuditHarness;
    let trail: TrailUnderTest;
    let clock: ManualClock;
    let audit: TestedStore;

    beforeEach(async () => {
      h = await makeHarness();
      trail = h.trail ?? stateTrail(h.state);
      expect(trail.kind).toBe(kind);
      clock = new ManualClock(NOW);
      audit = trail.open(h.state, { clock });
    });
    afterEach(async () => {
      await h.cleanup();
    });

    /** A total is exact when one index answers every filter, or always from a table. */
    const totalOf = (count: number, oneIndex: boolean) => (oneIndex || !onState ? count : undefined);
    const storeWith = (opts: { scanBudget: number }) => trail.open(h.state, { clock, ...opts });
    /** The state trail's own store, with options only it has (memory caps). */
    const stateStoreWith = (opts: StateAuditStoreOptions) => new StateAuditStore(h.state, { clock, ...opts });
    const query = (q: Query, store = audit) => store.query({ limit: 50, offset: 0, ...q });
    const appendAll = async (count: number, make: (i: number) => Parameters<AuditStore['append']>[0], chain = false) => {
      const out: AuditRecord[] = [];
      for (let i = 0; i < count; i++) out.push(await audit.append(make(i), { ttlMs: null, chain }));
      return out;
    };
    /** Follows next_cursor to the end; fails on a loop. */
    const allPages = async (q: Query, store = audit) => {
      const pages: AuditPage[] = [];
      let cursor: string | undefined;
      do {
        const page = await query({ ...q, ...(cursor !== undefined ? { cursor } : {}) }, store);
        pages.push(page);
        cursor = page.next_cursor;
        if (pages.length > 500) throw new Error('cursor paging does not terminate');
      } while (cursor !== undefined);
      return pages;
    };
    const ids = (records: readonly AuditRecord[]) => records.map((r) => r.id);

    describe('append', () => {
      it('assigns a time-sortable id and expires_at from the TTL, and no chain fields unless chained', async () => {
        const first = await audit.append(draft({ id: 'writer-id', dispatchedAtMs: NOW }), { ttlMs: 60_000, chain: false });
        const second = await audit.append(draft({ dispatchedAtMs: NOW + 1 }), { ttlMs: null, chain: false });
        expect(first.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(second.id > first.id).toBe(true);
        expect(first.expires_at).toBe(new Date(NOW + 60_000).toISOString());
        expect(second.expires_at).toBeNull();
        expect(first).toMatchObject({ sequence_number: null, previous_hash: null, record_hash: null });
        expect(await audit.get('act-1')).toEqual(second);
      });

      it('keeps every field of the draft, the id first, a silence comment included', async () => {
        const given = draft({ action_id: 'act-fields', dispatchedAtMs: NOW, silence_comment: 'maintenance window', trace_id: 'a'.repeat(32) });
        const appended = await audit.append(given, { ttlMs: null, chain: false });
        const read = await audit.get('act-fields');
        expect(read).toEqual(appended);
        expect(Object.keys(appended)[0]).toBe('id');
        const { id: _id, sequence_number: _s, previous_hash: _p, record_hash: _r, ...fields } = appended;
        expect(fields).toEqual(given);
      });
    });

    describe('query', () => {
      let all: AuditRecord[];
      beforeEach(async () => {
        all = (await appendAll(90, (i) => variedDraft(i, BASE))).sort(newestFirst);
      });
      const expected = (pred: (r: AuditRecord) => boolean) => all.filter(pred);

      it('answers every filter alone, with an exact total', async () => {
        for (const field of AuditFilterFields) {
          const values = new Set(all.map((r) => r[field]).filter((v): v is string => v !== null));
          expect(values.size).toBeGreaterThan(1);
          for (const value of values) {
            const page = await query({ [field]: value, limit: 1000 });
            const want = expected((r) => r[field] === value);
            expect(ids(page.records), `${field}=${value}`).toEqual(ids(want));
            expect(page.total, `${field}=${value}`).toBe(want.length);
          }
        }
      });

      it('combines filters; total only when one index answers them all', async () => {
        const cases: { q: Query; total: boolean }[] = [
          { q: { namespace: 'ns-a', tenant: 't1' }, total: true },
          { q: { namespace: 'ns-a', tenant: 't1', outcome: 'executed' }, total: true },
          { q: { namespace: 'ns-b', tenant: 't2', provider: 'sms' }, total: true },
          { q: { namespace: 'ns-b', tenant: 't3', action_type: 'page' }, total: true },
          { q: { namespace: 'ns-b', tenant: 't2', provider: 'sms', action_type: 'page' }, total: false },
          { q: { namespace: 'ns-a', tenant: 't3', outcome: 'suppressed', provider: 'webhook' }, total: false },
          { q: { tenant: 't3', verdict: 'allow' }, total: false },
          { q: { provider: 'email', outcome: 'failed', caller_id: 'bob' }, total: false },
          { q: { namespace: 'ns-a', matched_rule: 'rule-a' }, total: false },
          { q: { chain_id: 'chain-x', caller_id: 'alice' }, total: false },
          { q: { namespace: 'ns-a', tenant: 't2', verdict: 'throttle', chain_id: 'chain-y' }, total: false },
          { q: { namespace: 'ns-a', tenant: 'nobody' }, total: true },
          { q: { namespace: 'ns-a', tenant: 't1', provider: 'no-such-provider' }, total: true },
          { q: {}, total: true },
        ];
        for (const { q, total } of cases) {
          const page = await query({ ...q, limit: 1000 });
          const want = expected((r) => Object.entries(q).every(([field, value]) => r[field as keyof AuditRecord] === value));
          expect(ids(page.records), JSON.stringify(q)).toEqual(ids(want));
          expect(page.total, JSON.stringify(q)).toBe(totalOf(want.length, total));
        }
      });

      it('bounds dispatched_at by from and to, inclusively', async () => {
        const t1 = BASE + 5_000;
        const t2 = BASE + 12_000;
        const within = (r: AuditRecord, from = -Infinity, to = Infinity) => Date.parse(r.dispatched_at) >= from && Date.parse(r.dispatched_at) <= to;
        const both = await query({ fromMs: t1, toMs: t2, limit: 1000 });
        expect(ids(both.records)).toEqual(ids(expected((r) => within(r, t1, t2))));
        expect(both.records).toHaveLength(24); // 8 timestamps × 3, both ends included
        expect(both.total).toBe(24);
        expect(ids((await query({ fromMs: t2, limit: 1000 })).records)).toEqual(ids(expected((r) => within(r, t2))));
        expect(ids((await query({ toMs: t1, limit: 1000 })).records)).toEqual(ids(expected((r) => within(r, -Infinity, t1))));
        const filtered = await query({ namespace: 'ns-b', tenant: 't1', fromMs: t1, toMs: t2 + 10_000 });
        expect(ids(filtered.records)).toEqual(ids(expected((r) => r.namespace === 'ns-b' && r.tenant === 't1' && within(r, t1, t2 + 10_000))));
        expect(await query({ fromMs: BASE + 500, toMs: BASE + 900 })).toEqual({ records: [], total: 0, limit: 50, offset: 0 });
      });

      it('pages with limit and offset, including empty pages past the end', async () => {
        for (const q of [{ namespace: 'ns-a', tenant: 't1' }, { provider: 'email', verdict: 'allow' }, {}] as Query[]) {
          const want = expected((r) => Object.entries(q).every(([field, value]) => r[field as keyof AuditRecord] === value));
          const seen: AuditRecord[] = [];
          for (let offset = 0; offset < want.length + 8; offset += 4) {
            const page = await query({ ...q, limit: 4, offset });
            expect(page.limit).toBe(4);
            expect(page.offset).toBe(offset);
            seen.push(...page.records);
            if (offset >= want.length) expect(page.records).toEqual([]);
          }
          expect(ids(seen), JSON.stringify(q)).toEqual(ids(want));
          const past = await query({ ...q, limit: 10, offset: want.length + 100 });
          expect(past.records).toEqual([]);
          expect(past.next_cursor).toBeUndefined();
          expect((await query({ ...q, limit: 1 })).records.map((r) => r.id)).toEqual(ids(want.slice(0, 1)));
        }
      });

      it('applies the visible predicate before paging, and then omits total', async () => {
        const visible = (r: AuditRecord) => r.caller_id !== 'bob';
        const page = await query({ namespace: 'ns-a', visible, limit: 7, offset: 3 });
        const want = expected((r) => r.namespace === 'ns-a' && visible(r));
        expect(ids(page.records)).toEqual(ids(want.slice(3, 10)));
        expect(page.total).toBeUndefined();
        const pages = await allPages({ namespace: 'ns-a', visible, limit: 7 });
        expect(ids(pages.flatMap((p) => p.records))).toEqual(ids(want));
      });

      it('rejects a malformed cursor with a 400 error', async () => {
        await expect(query({ cursor: 'garbage' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      });
    });

    it('returns an empty page from an empty store', async () => {
      expect(await query({})).toEqual({ records: [], total: 0, limit: 50, offset: 0 });
      expect(await query({ namespace: 'ns', tenant: 't1', provider: 'email' })).toEqual({ records: [], total: 0, limit: 50, offset: 0 });
    });

    it('orders records with equal timestamps newest appended first', async () => {
      const records = await appendAll(6, (i) => draft({ action_id: `same-${i}`, dispatchedAtMs: BASE }));
      await audit.append(draft({ action_id: 'older', dispatchedAtMs: BASE - 1 }), { ttlMs: null, chain: false });
      const page = await query({ namespace: 'ns', tenant: 't1' });
      expect(page.records.map((r) => r.action_id)).toEqual(['same-5', 'same-4', 'same-3', 'same-2', 'same-1', 'same-0', 'older']);
      // Every index orders ties alike, so a cursor taken from one index resumes correctly in another.
      const first = await query({ provider: 'email', limit: 2 });
      const rest = await allPages({ namespace: 'ns', tenant: 't1', limit: 2, ...(first.next_cursor ? { cursor: first.next_cursor } : {}) });
      expect([...first.records, ...rest.flatMap((p) => p.records)].map((r) => r.action_id)).toEqual(page.records.map((r) => r.action_id));
      expect(records).toHaveLength(6);
    });

    describe('cursor paging', () => {
      let all: AuditRecord[];
      beforeEach(async () => {
        // Seven records per timestamp, so pages often end inside a run of ties.
        all = (
          await appendAll(300, (i) =>
            draft({
              action_id: `act-${i}`,
              verdict: i % 3 === 0 ? 'allow' : 'suppress',
              caller_id: i % 2 === 0 ? 'even' : 'odd',
              dispatchedAtMs: BASE + Math.floor(i / 7) * 1000,
            }),
          )
        ).sort(newestFirst);
      });

      it('visits every record once, in order, on exact and filtered plans', async () => {
        const cases: { q: Query; want: AuditRecord[] }[] = [
          { q: { namespace: 'ns', tenant: 't1' }, want: all },
          { q: {}, want: all },
          { q: { namespace: 'ns', tenant: 't1', verdict: 'allow' }, want: all.filter((r) => r.verdict === 'allow') },
          { q: { tenant: 't1', visible: (r) => r.caller_id === 'odd' }, want: all.filter((r) => r.caller_id === 'odd') },
        ];
        for (const { q, want } of cases) {
          const pages = await allPages({ ...q, limit: 37 });
          const got = pages.flatMap((p) => p.records);
          expect(new Set(ids(got)).size).toBe(got.length);
          expect(ids(got)).toEqual(ids(want));
          expect(pages.slice(1).every((p) => p.total === undefined)).toBe(true);
          expect(pages.at(-1)?.next_cursor).toBeUndefined();
        }
      });

      it('is not disturbed by newer records appended between pages', async () => {
        const first = await query({ namespace: 'ns', tenant: 't1', limit: 40 });
        await appendAll(20, (i) => draft({ action_id: `new-${i}`, dispatchedAtMs: BASE + 1_000_000 + i }));
        const rest = await allPages({ namespace: 'ns', tenant: 't1', limit: 40, cursor: first.next_cursor ?? '' });
        expect(ids([...first.records, ...rest.flatMap((p) => p.records)])).toEqual(ids(all));
      });

      it('walks a run of equal timestamps longer than a batch without rereading it', async () => {
        const ties = (await appendAll(150, (i) => draft({ action_id: `tie-${i}`, dispatchedAtMs: BASE - 5000 }))).sort(newestFirst);
        const visible = (r: AuditRecord) => Number(r.action_id.slice(4)) % 2 === 0;
        const tight = storeWith({ scanBudget: 120 });
        const pages = await allPages({ namespace: 'ns', toMs: BASE - 5000, visible, limit: 20 }, tight);
        expect(ids(pages.flatMap((p) => p.records))).toEqual(ids(ties.filter(visible)));
        // Each page needs ~40 entries of the run: a walk that rereads the run would spend the budget short of a page.
        expect(pages.slice(0, -1).every((p) => p.records.length === 20)).toBe(true);
      });

      it('ignores offset when a cursor is given', async () => {
        const first = await query({ namespace: 'ns', tenant: 't1', limit: 10 });
        const second = await query({ namespace: 'ns', tenant: 't1', limit: 10, offset: 25, cursor: first.next_cursor ?? '' });
        expect(ids(second.records)).toEqual(ids(all.slice(10, 20)));
        expect(second.total).toBeUndefined();
      });

      it('ends a page early with a cursor when the scan budget is spent, and goes on from there', async () => {
        const budgeted = storeWith({ scanBudget: 60 });
        const visible = (r: AuditRecord) => Number(r.action_id.slice(4)) % 40 === 0;
        const want = all.filter(visible);
        const pages = await allPages({ visible, limit: 5 }, budgeted);
        expect(ids(pages.flatMap((p) => p.records))).toEqual(ids(want));
        expect(pages.some((p) => p.records.length < 5 && p.next_cursor !== undefined)).toBe(true);
        // An offset still unspent when the budget runs out travels in the cursor.
        const skipped = await allPages({ visible, limit: 5, offset: 3 }, budgeted);
        expect(ids(skipped.flatMap((p) => p.records))).toEqual(ids(want.slice(3)));
      });
    });

    // State internals: round trips, index entries, memory caps.
    if (onState)
      describe('cursor page cost', () => {
        it('reads a cursor page with one index range and one record read when timestamps are distinct', async () => {
          await appendAll(130, (i) => draft({ action_id: `cost-${i}`, dispatchedAtMs: BASE + i * 1000 }));
          // Indexed before counting: the counted store reads through a proxy of the state, which does not share the memory ingest's queue.
          await audit.catchUp();
          const calls = { indexRange: 0, getMany: 0 };
          const counted = new Proxy(h.state, {
            get(target, prop, receiver) {
              const value = Reflect.get(target, prop, receiver) as unknown;
              if ((prop === 'indexRange' || prop === 'getMany') && typeof value === 'function') {
                return (...args: unknown[]) => {
                  calls[prop]++;
                  return (value as (...a: unknown[]) => unknown).apply(target, args);
                };
              }
              return value;
            },
          });
          const store = new StateAuditStore(counted, { clock });
          const pageCosts: { indexRange: number; getMany: number; records: number; more: boolean }[] = [];
          let cursor: string | undefined;
          do {
            calls.indexRange = calls.getMany = 0;
            const page = await query({ namespace: 'ns', tenant: 't1', limit: 50, ...(cursor !== undefined ? { cursor } : {}) }, store);
            pageCosts.push({ ...calls, records: page.records.length, more: page.next_cursor !== undefined });
            cursor = page.next_cursor;
          } while (cursor !== undefined);
          // The second and third pages resume after a cursor; the last one also learns there is no more.
          expect(pageCosts.slice(1)).toEqual([
            { indexRange: 1, getMany: 1, records: 50, more: true },
            { indexRange: 1, getMany: 1, records: 30, more: false },
          ]);
        });
      });

    describe('get', () => {
      it('returns the most recent record of an action id', async () => {
        await audit.append(draft({ action_id: 'a', outcome: 'pending_approval', dispatchedAtMs: BASE }), { ttlMs: null, chain: false });
        const latest = await audit.append(draft({ action_id: 'a', outcome: 'executed', dispatchedAtMs: BASE + 10 }), { ttlMs: null, chain: true });
        await audit.append(draft({ action_id: 'b', dispatchedAtMs: BASE + 20 }), { ttlMs: null, chain: false });
        expect(await audit.get('a')).toEqual(latest);
        expect(await audit.get('missing')).toBeNull();
      });
    });

    describe('expiry', () => {
      /** Every index a record is in (placementOf), as rendered-independent keys. */
      const indexesOf = (r: AuditRecord): StateKey[] => {
        const p = placementOf(r, h.state.sharded);
        return [...p.tenant, ...p.global, ...(p.chain ? [p.chain] : []), ...(p.expiry ? [p.expiry] : [])];
      };
      const same = (a: StateKey, b: StateKey) => a.kind === b.kind && a.namespace === b.namespace && a.tenant === b.tenant && a.id === b.id;

      it('expire() removes due records (and their entries from every index)', async () => {
        const kept = await appendAll(5, (i) => draft({ action_id: `kept-${i}`, dispatchedAtMs: NOW - 1000 + i }));
        const doomed: AuditRecord[] = [];
        for (let i = 0; i < 10; i++) {
          const d = draft({
            action_id: `doomed-${i}`,
            tenant: 'short-lived',
            provider: 'sms',
            outcome: 'failed',
            matched_rule: 'r1',
            chain_id: 'c1',
            caller_id: `caller-${i}`,
            dispatchedAtMs: NOW + i,
          });
          doomed.push(await audit.append(d, { ttlMs: 60_000, chain: i % 2 === 0 }));
        }
        expect(await audit.expire(clock.now(), 100)).toBe(0);
        clock.advance(60_000 + 5); // the first six are due
        expect(await audit.expire(clock.now(), 4)).toBe(4);
        expect(await audit.expire(clock.now(), 100)).toBe(2);
        clock.advance(10_000);
        expect(await audit.expire(clock.now(), 100)).toBe(4);
        expect(await audit.expire(clock.now(), 100)).toBe(0);

        for (const r of doomed) {
          expect(await audit.get(r.action_id)).toBeNull();
          if (!onState) continue;
          expect(await h.state.get(recordKey(r, r.id))).toBeNull();
          for (const index of indexesOf(r)) {
            const left = kept.filter((k) => indexesOf(k).some((i) => same(i, index))).length;
            expect(await h.state.indexCount(index), JSON.stringify(index)).toBe(left);
          }
        }
        if (onState) expect(await h.state.indexCount(chainIndexKey(doomed[0] ?? kept[0]!))).toBe(0);
        const page = await query({});
        expect(ids(page.records)).toEqual(ids([...kept].sort(newestFirst)));
        expect(page.total).toBe(5);
      });

      if (onState)
        it('expire() completes a removal an earlier run left half done', async () => {
          const r = await audit.append(draft({ action_id: 'half', dispatchedAtMs: NOW }), { ttlMs: 1000, chain: true });
          const { tenant, chain } = placementOf(r, h.state.sharded);
          // A reaper died after removing some index entries, before the value and expiry entry.
          for (const index of [...tenant, ...(chain ? [chain] : [])]) await h.state.indexRemove(index, tenantMember(r.id));
          clock.advance(1000);
          expect(await audit.expire(clock.now(), 0)).toBe(0);
          expect(await audit.expire(clock.now(), 10)).toBe(1);
          for (const index of indexesOf(r)) expect(await h.state.indexCount(index)).toBe(0);
          expect(await h.state.get(recordKey(r, r.id))).toBeNull();
        });

      if (onState)
        it('expire() removes a record from every index by its index fields alone, whatever its payload holds', async () => {
          const r = await audit.append(draft({ action_id: 'odd-payload', dispatchedAtMs: NOW, chain_id: 'c9' }), { ttlMs: 1000, chain: true });
          await audit.catchUp();
          // A payload no record may hold: the full schema refuses the value, removal reads past it.
          await h.state.set(recordKey(r, r.id), JSON.stringify({ ...r, action_payload: 'not an object' }));
          clock.advance(1000);
          expect(await audit.expire(clock.now(), 10)).toBe(1);
          for (const index of indexesOf(r)) expect(await h.state.indexCount(index), JSON.stringify(index)).toBe(0);
          expect(await h.state.get(recordKey(r, r.id))).toBeNull();
        });

      it('hides expired records until they are reaped', async () => {
        const lasting = await audit.append(draft({ action_id: 'lasting', dispatchedAtMs: NOW }), { ttlMs: null, chain: false });
        await audit.append(draft({ action_id: 'brief', dispatchedAtMs: NOW }), { ttlMs: 1000, chain: false });
        expect((await query({ namespace: 'ns', tenant: 't1' })).records).toHaveLength(2);
        clock.advance(1000); // expires_at reached: gone from now on
        expect(ids((await query({ namespace: 'ns', tenant: 't1' })).records)).toEqual([lasting.id]);
        expect(ids((await query({ outcome: 'executed', caller_id: 'caller-1' })).records)).toEqual([lasting.id]);
        expect(await audit.get('brief')).toBeNull();
        expect(await audit.get('lasting')).toEqual(lasting);
      });
    });

    describe('indexing before reads', () => {
      it('lists what was appended before each query, however many queries overlap', async () => {
        const seen: number[] = [];
        for (let round = 0; round < 5; round++) {
          await audit.append(draft({ action_id: `overlap-${round}`, dispatchedAtMs: BASE + round }), { ttlMs: null, chain: false });
          // Several readers at once, as concurrent requests: each must see every record appended before it started.
          const pages = await Promise.all([0, 1, 2].map(() => query({ namespace: 'ns', tenant: 't1', limit: 100 })));
          seen.push(...pages.map((p) => p.records.filter((r) => r.action_id.startsWith('overlap-')).length));
        }
        expect(seen).toEqual([1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5]);
      });
    });

    if (onState)
      describe('memory cap', () => {
        it(`evicts the oldest records beyond maxRecords on the memory backend only`, async () => {
          const evictions: number[] = [];
          const capped = stateStoreWith({ maxRecords: 10, onEvicted: (n) => evictions.push(n) });
          const records: AuditRecord[] = [];
          for (let i = 0; i < 15; i++)
            records.push(await capped.append(draft({ action_id: `a-${i}`, dispatchedAtMs: BASE + i }), { ttlMs: null, chain: i % 3 === 0 }));
          const page = await query({ limit: 100 });
          if (h.state.backend === 'memory') {
            expect(ids(page.records)).toEqual(ids(records.slice(5).reverse()));
            expect(evictions.reduce((a, b) => a + b, 0)).toBe(5);
            expect(await audit.get('a-0')).toBeNull();
            expect(await h.state.get(recordKey(records[0]!, records[0]!.id))).toBeNull();
            expect(await h.state.indexCount(placementOf(records[0]!, h.state.sharded).tenant[0]!)).toBe(10);
          } else {
            expect(page.records).toHaveLength(15);
            expect(evictions).toEqual([]);
          }
        });
      });

    if (onState)
      describe('memory byte cap', () => {
        it('keeps the stored records within maxBytes, evicting the oldest, and counts every eviction', async () => {
          const evictions: number[] = [];
          const capped = stateStoreWith({ maxBytes: 20_000, onEvicted: (n) => evictions.push(n) });
          // Records of different sizes, so the cap is not a record count in disguise.
          const size = (i: number) => 'x'.repeat(200 + ((i * 137) % 900));
          const appended: AuditRecord[] = [];
          for (let i = 0; i < 120; i++) {
            appended.push(
              await capped.append(draft({ action_id: `b-${i}`, dispatchedAtMs: BASE + i, action_payload: { pad: size(i) } }), { ttlMs: null, chain: false }),
            );
            if (i % 25 === 24) await capped.catchUp(); // batches of different sizes
          }
          await capped.catchUp();
          const kept = (await query({ limit: 1000 })).records;
          if (h.state.backend === 'memory') {
            const stored = capped.storedBytes();
            // The store's own count is exact: the kept records' JSON, nothing else.
            expect(stored).toBe(kept.reduce((sum, r) => sum + JSON.stringify(r).length, 0));
            expect(stored).toBeLessThanOrEqual(20_000);
            expect(stored).toBeGreaterThan(20_000 - 2_000); // not evicted far below it either
            expect(kept.length).toBeLessThan(120);
            expect(evictions.reduce((a, b) => a + b, 0)).toBe(120 - kept.length);
            // Oldest first: what is left is the newest ones.
            expect(ids(kept)).toEqual(ids(appended.slice(120 - kept.length).reverse()));
          } else {
            expect(kept).toHaveLength(120);
            expect(evictions).toEqual([]);
            expect(capped.storedBytes()).toBe(0);
          }
        });
      });

    describe('hash chain', () => {
      const chainOf = async (count: number, scope = { namespace: 'ns', tenant: 't1' }, start = 0) =>
        appendAll(count, (i) => draft({ ...scope, action_id: `${scope.tenant}-${start + i}`, dispatchedAtMs: BASE + (start + i) * 1000 }), true);
      const verify = (tenant = 't1', window: { from?: number; to?: number } = {}) =>
        audit.verify({
          namespace: 'ns',
          tenant,
          ...(window.from !== undefined ? { from: new Date(window.from).toISOString() } : {}),
          ...(window.to !== undefined ? { to: new Date(window.to).toISOString() } : {}),
        });
      const tamper = (record: AuditRecord, change: Partial<AuditRecord>) => trail.rewrite(record, change);

      it('links each tenant chain with consecutive sequence numbers and hashes', async () => {
        const t1: AuditRecord[] = [];
        const t2: AuditRecord[] = [];
        for (let i = 0; i < 12; i++) {
          t1.push(...(await chainOf(1, { namespace: 'ns', tenant: 't1' }, i)));
          if (i % 2 === 0) t2.push(...(await chainOf(1, { namespace: 'ns', tenant: 't2' }, i)));
          await audit.append(draft({ action_id: `plain-${i}` }), { ttlMs: null, chain: false });
        }
        for (const chain of [t1, t2]) {
          chain.forEach((r, i) => {
            expect(r.sequence_number).toBe(i);
            expect(r.previous_hash).toBe(i === 0 ? null : chain[i - 1]?.record_hash);
            expect(r.record_hash).toBe(recordHash(r));
            expect(r.record_hash).toMatch(/^[0-9a-f]{64}$/);
          });
        }
        expect(await verify('t1')).toEqual({ valid: true, records_checked: 12, first_record_id: t1[0]?.id, last_record_id: t1[11]?.id });
        expect(await verify('t2')).toEqual({ valid: true, records_checked: 6, first_record_id: t2[0]?.id, last_record_id: t2[5]?.id });
        expect(await verify('empty')).toEqual({ valid: true, records_checked: 0 });
      });

      it('verify names a record altered in the backend as the first broken one', async () => {
        const chain = await chainOf(10);
        await tamper(chain[4]!, { outcome: 'suppressed' });
        expect(await verify()).toMatchObject({ valid: false, first_broken_at: 4, records_checked: 5, last_record_id: chain[4]?.id });
      });

      it('verify catches a rewritten hash through the next link, and at the head', async () => {
        const chain = await chainOf(6);
        const forged = { ...chain[2]!, outcome: 'suppressed' };
        await tamper(chain[2]!, { outcome: 'suppressed', record_hash: recordHash(forged) });
        expect(await verify()).toMatchObject({ valid: false, first_broken_at: 3 });
        const last = { ...chain[5]!, outcome: 'failed' };
        await tamper(chain[2]!, { outcome: chain[2]!.outcome, record_hash: chain[2]!.record_hash });
        await tamper(chain[5]!, { outcome: 'failed', record_hash: recordHash(last) });
        expect(await verify()).toMatchObject({ valid: false, first_broken_at: 5 });
      });

      it('verify names a deleted record', async () => {
        const chain = await chainOf(10);
        // In the state, a value can go while its chain entry stays: the missing record is named.
        if (onState) await h.state.delete(recordKey(chain[6]!, chain[6]!.id));
        else await trail.remove(chain[6]!);
        expect(await verify()).toMatchObject({ valid: false, first_broken_at: 6, records_checked: 6 });
        // Gone whole: the gap is named.
        await trail.remove(chain[3]!);
        expect(await verify()).toMatchObject({ valid: false, first_broken_at: 3, records_checked: 3 });
      });

      it('verify notices records cut from the end of the chain', async () => {
        const chain = await chainOf(5);
        for (const r of chain.slice(3)) await trail.remove(r);
        expect(await verify()).toMatchObject({ valid: false, first_broken_at: 3, records_checked: 3 });
      });

      it('with immutable audit (complete chains), records deleted from the start of a chain, or all of them, are a break', async () => {
        const chain = await chainOf(5);
        // Indexed first (verify catches up), then deleted, as someone with access to the backend would.
        expect(await verify()).toMatchObject({ valid: true, records_checked: 5 });
        await trail.remove(chain[0]!);
        await trail.remove(chain[1]!);
        // Without immutable audit this reads as the start of the chain reaped by retention.
        expect(await verify()).toMatchObject({ valid: true, records_checked: 3 });
        const complete = trail.open(h.state, { clock, completeChains: true });
        const verifyComplete = () => complete.verify({ namespace: 'ns', tenant: 't1' });
        expect(await verifyComplete()).toMatchObject({ valid: false, first_broken_at: 0 });
        for (const r of chain.slice(2)) await trail.remove(r);
        // Without immutable audit, a chain with nothing left reads as reaped by retention.
        expect(await verify()).toMatchObject({ valid: true, records_checked: 0 });
        expect(await verifyComplete()).toMatchObject({ valid: false, first_broken_at: 0, records_checked: 0 });
        // An untouched complete chain still verifies.
        await chainOf(3, { namespace: 'ns', tenant: 'whole' });
        expect(await complete.verify({ namespace: 'ns', tenant: 'whole' })).toMatchObject({ valid: true, records_checked: 3 });
      });

      it('with immutable audit, records that could expire before it began may be gone; those kept for good may not', async () => {
        const scope = { namespace: 'ns', tenant: 'switched' };
        // Written under a mode with a TTL (soc2), and reaped...
        const early: AuditRecord[] = [];
        for (let i = 0; i < 3; i++)
          early.push(await audit.append(draft({ ...scope, action_id: `early-${i}`, dispatchedAtMs: BASE + i * 1000 }), { ttlMs: 1000, chain: true }));
        expect(await audit.verify(scope)).toMatchObject({ valid: true, records_checked: 3 });
        for (const r of early) await trail.remove(r);
        // ...then kept for good (hipaa).
        const kept = await appendAll(2, (i) => draft({ ...scope, action_id: `kept-${i}`, dispatchedAtMs: BASE + (10 + i) * 1000 }), true);
        const complete = trail.open(h.state, { clock, completeChains: true });
        expect(await complete.verify(scope)).toMatchObject({ valid: true, records_checked: 2 });
        await trail.remove(kept[0]!);
        expect(await complete.verify(scope)).toMatchObject({ valid: false, first_broken_at: 3 });
      });

      it('verify checks the part of a chain dispatched within from/to', async () => {
        const chain = await chainOf(10);
        await tamper(chain[8]!, { outcome: 'suppressed' });
        expect(await verify('t1', { from: BASE + 3000, to: BASE + 6000 })).toEqual({
          valid: true,
          records_checked: 4,
          first_record_id: chain[3]?.id,
          last_record_id: chain[6]?.id,
        });
        expect(await verify('t1', { from: BASE + 7000 })).toMatchObject({ valid: false, first_broken_at: 8 });
        expect(await verify('t1', { to: BASE + 2000 })).toMatchObject({ valid: true, records_checked: 3 });
        expect(await verify('t1', { from: BASE + 20_000 })).toEqual({ valid: true, records_checked: 0 });
        await tamper(chain[5]!, { verdict: 'suppress' });
        expect(await verify('t1', { from: BASE + 3000, to: BASE + 6000 })).toMatchObject({ valid: false, first_broken_at: 5 });
      });

      it('verify starts at the oldest remaining record once retention reaped the start', async () => {
        const chain: AuditRecord[] = [];
        for (let i = 0; i < 6; i++) {
          chain.push(await audit.append(draft({ action_id: `r-${i}`, dispatchedAtMs: NOW + i * 1000 }), { ttlMs: 60_000, chain: true }));
        }
        clock.advance(61_500); // records 0 and 1 are due
        expect(await audit.expire(clock.now(), 100)).toBe(2);
        expect(await verify()).toEqual({ valid: true, records_checked: 4, first_record_id: chain[2]?.id, last_record_id: chain[5]?.id });
        await tamper(chain[2]!, { previous_hash: null });
        expect(await verify()).toMatchObject({ valid: false, first_broken_at: 2 });
      });

      it('keeps one gapless chain under concurrent appends from two connections', async () => {
        const other = trail.open(await h.connectAnother(), { clock });
        const appended = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            (i % 2 === 0 ? audit : other).append(draft({ action_id: `c-${i}`, dispatchedAtMs: BASE + i }), { ttlMs: null, chain: true }),
          ),
        );
        const bySeq = [...appended].sort((a, b) => (a.sequence_number ?? -1) - (b.sequence_number ?? -1));
        expect(bySeq.map((r) => r.sequence_number)).toEqual(Array.from({ length: 50 }, (_, i) => i));
        for (const [i, r] of bySeq.entries()) expect(r.previous_hash).toBe(i === 0 ? null : bySeq[i - 1]?.record_hash);
        expect(await verify()).toMatchObject({ valid: true, records_checked: 50 });
        expect((await query({ namespace: 'ns', tenant: 't1', limit: 100 })).total).toBe(50);
      });
    });
  });
}
