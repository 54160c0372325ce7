import { ManualClock } from '@sluice/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RecordRepository, type RecordRepositoryOptions } from '../../src/records/record-repository.js';
import type { StateStore } from '../../src/state-store.js';
import { racingStore } from '../../../../test/support/racing-store.js';
import { watchedReads } from '../../../../test/support/watched-reads.js';

/** Two connections to one backend: two replicas as far as the repository can tell. */
export interface ReplicaPair {
  stores: [StateStore, StateStore];
  cleanup(): Promise<void>;
}

interface Note {
  id: string;
  namespace: string;
  tenant: string;
  title: string;
  count: number;
}

const decode = (raw: unknown): Note | null => {
  const r = raw as Partial<Note> | null;
  return r &&
    typeof r.id === 'string' &&
    typeof r.namespace === 'string' &&
    typeof r.tenant === 'string' &&
    typeof r.title === 'string' &&
    typeof r.count === 'number'
    ? { id: r.id, namespace: r.namespace, tenant: r.tenant, title: r.title, count: r.count }
    : null;
};

const note = (id: string, over: Partial<Note> = {}): Note => ({ id, namespace: 'ns', tenant: 't', title: id, count: 0, ...over });

const silentLog = { warn: () => {}, error: () => {} };

/** The record repository contract: every backend runs exactly these tests. */
export function recordRepositoryContract(name: string, makePair: () => Promise<ReplicaPair>): void {
  describe(`RecordRepository contract: ${name}`, () => {
    let pair: ReplicaPair | undefined;
    const clock = new ManualClock(Date.UTC(2026, 10, 25, 12));
    const repos: RecordRepository<Note>[] = [];
    beforeEach(async () => {
      pair = await makePair();
    });
    afterEach(async () => {
      await Promise.all(repos.splice(0).map((r) => r.close()));
      await pair?.cleanup();
    });
    /** A repository on replica 0 or 1 (each test has fresh stores, so tests never share keys). */
    const repo = (replica: 0 | 1, over: Partial<RecordRepositoryOptions<Note>> = {}) => {
      if (!pair) throw new Error('no stores outside a test');
      const r = new RecordRepository<Note>({ state: pair.stores[replica], clock, kind: 'note', label: 'note', decode, globalIds: true, ...over });
      repos.push(r);
      return r;
    };
    const ids = async (r: RecordRepository<Note>) => (await r.listAll()).records.map((s) => s.record.id);

    it('creates, reads by scope and by id, lists, updates and deletes', async () => {
      const r = repo(0);
      expect(await r.create(note('a'))).toBe('created');
      expect(await r.create(note('b', { tenant: 'u' }))).toBe('created');
      expect(await r.get({ namespace: 'ns', tenant: 't', id: 'a' })).toMatchObject({ record: note('a'), version: 1 });
      expect(await r.get({ namespace: 'ns', tenant: 'u', id: 'a' })).toBeNull();
      expect((await r.find('b'))?.record).toEqual(note('b', { tenant: 'u' }));
      expect(await r.find('nope')).toBeNull();
      expect(await ids(r)).toEqual(['a', 'b']);
      const updated = await r.update('a', (n) => ({ ...n, count: 5 }));
      expect(updated).toMatchObject({ record: note('a', { count: 5 }), version: 2 });
      expect(await r.remove('a')).toBe(true);
      expect(await r.remove('a')).toBe(false);
      expect(await r.update('a', (n) => n)).toBeNull();
      expect(await ids(r)).toEqual(['b']);
    });

    it('keeps ids unique across scopes, and a unique name within a scope', async () => {
      const r = repo(0, { uniqueName: () => 'the-one' });
      expect(await r.create(note('a'))).toBe('created');
      expect(await r.create(note('a', { tenant: 'u' }))).toBe('id-taken');
      expect(await r.create(note('b'))).toBe('unique-taken');
      // The refused creates released what they had claimed: b and the other scope are free.
      expect(await r.create(note('b', { tenant: 'u' }))).toBe('created');
      await r.remove('a');
      expect(await r.create(note('c'))).toBe('created');
    });

    it('pages one scope in creation order', async () => {
      const r = repo(0);
      for (const [i, id] of ['e', 'a', 'd', 'b', 'c'].entries()) {
        clock.advance(1);
        expect(await r.create(note(id, { count: i }))).toBe('created');
      }
      await r.create(note('other', { tenant: 'u' }));
      const scope = { namespace: 'ns', tenant: 't' };
      const page = async (offset: number, limit: number) => (await r.list(scope, { offset, limit })).records.map((s) => s.record.id);
      expect(await page(0, 2)).toEqual(['e', 'a']);
      expect(await page(2, 2)).toEqual(['d', 'b']);
      expect(await page(4, 2)).toEqual(['c']);
      expect(await page(5, 2)).toEqual([]);
      expect((await r.list(scope)).total).toBe(5);
    });

    it('pages the newest records of a scope, or of every scope, reading only the page', async () => {
      const r = repo(0);
      for (const id of ['a', 'b', 'c', 'd']) {
        clock.advance(1);
        await r.create(note(id));
        clock.advance(1);
        await r.create(note(`${id}-u`, { tenant: 'u' }));
      }
      const scope = { namespace: 'ns', tenant: 't' };
      const newest = async (filter: { namespace?: string; tenant?: string }, offset: number, limit: number) => {
        const page = await r.newestPage(filter, { offset, limit });
        return page && { ids: page.records.map((n) => n.id), total: page.total };
      };
      expect(await newest(scope, 0, 3)).toEqual({ ids: ['d', 'c', 'b'], total: 4 });
      expect(await newest(scope, 3, 3)).toEqual({ ids: ['a'], total: 4 });
      expect(await newest({}, 0, 3)).toEqual({ ids: ['d-u', 'd', 'c-u'], total: 8 });
      expect(await newest({}, 8, 3)).toEqual({ ids: [], total: 8 });
      // No index answers a namespace or a tenant alone.
      expect(await newest({ namespace: 'ns' }, 0, 3)).toBeNull();
      expect(await newest({ tenant: 't' }, 0, 3)).toBeNull();
      // A dead create's listing entries (no record): a page that meets them drops them (once old).
      if (!pair) throw new Error('no stores');
      await pair.stores[0].indexAdd(r.keys.scopeIndex(scope), 'ghost', clock.now() - 120_000);
      await pair.stores[0].indexAdd(r.keys.all, JSON.stringify(['ns', 't', 'ghost']), clock.now() - 120_000);
      expect(await newest(scope, 3, 3)).toEqual({ ids: ['a'], total: 4 });
      expect(await newest(scope, 0, 10)).toEqual({ ids: ['d', 'c', 'b', 'a'], total: 4 });
      expect(await newest({}, 7, 3)).toEqual({ ids: ['a'], total: 8 });
      expect(await newest({}, 0, 10)).toMatchObject({ total: 8 });
      // A page reads its own records, not the scope's.
      const reads: string[] = [];
      const counting = watchedReads(pair.stores[0], (key) => reads.push(key.id));
      const paged = new RecordRepository<Note>({ state: counting, clock, kind: 'note', label: 'note', decode, globalIds: true });
      repos.push(paged);
      expect((await paged.newestPage({}, { offset: 1, limit: 2 }))?.records.map((n) => n.id)).toEqual(['d', 'c-u']);
      expect(reads.sort()).toEqual(['c-u', 'd']);
    });

    it('lets one of many concurrent creates of an id win, across two replicas', async () => {
      const [r0, r1] = [repo(0), repo(1)];
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? r1 : r0).create(note('same', { tenant: `t${i}`, count: i }))));
      expect(results.filter((x) => x === 'created')).toHaveLength(1);
      const winner = (await r1.find('same'))?.record;
      expect(winner).toBeDefined();
      expect(await ids(r0)).toEqual(['same']);
      // The losers left nothing behind: once the winner is gone, the id is free at once.
      expect(await r0.remove('same')).toBe(true);
      expect(await r1.create(note('same'))).toBe('created');
    });

    it('fills a bounded scope exactly, however the creates interleave', async () => {
      const [r0, r1] = [repo(0, { maxPerScope: 3, globalIds: false }), repo(1, { maxPerScope: 3, globalIds: false })];
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? r1 : r0).create(note(`n${i}`))));
      expect(results.filter((x) => x === 'created')).toHaveLength(3);
      expect(results.filter((x) => x === 'scope-full')).toHaveLength(9);
      expect((await r0.list({ namespace: 'ns', tenant: 't' })).records).toHaveLength(3);
    });

    it('gives a unique name to one of many concurrent creates', async () => {
      const opts = { uniqueName: () => 'pair' };
      const [r0, r1] = [repo(0, opts), repo(1, opts)];
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? r1 : r0).create(note(`p${i}`))));
      expect(results.filter((x) => x === 'created')).toHaveLength(1);
      expect(results.filter((x) => x === 'unique-taken')).toHaveLength(9);
    });

    it('loses no update when two replicas update at once', async () => {
      const [r0, r1] = [repo(0, { attempts: 100 }), repo(1, { attempts: 100 })];
      await r0.create(note('c'));
      await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? r1 : r0).update('c', (n) => ({ ...n, count: n.count + 1 }))));
      expect((await r0.find('c'))?.record.count).toBe(20);
    });

    it('never resurrects a record when an update races its delete', async () => {
      const [r0, r1] = [repo(0), repo(1)];
      for (let round = 0; round < 10; round++) {
        const id = `r${round}`;
        await r0.create(note(id));
        const [updated, removed] = await Promise.all([r0.update(id, (n) => ({ ...n, count: 1 })), r1.remove(id)]);
        expect(removed).toBe(true);
        expect(await r0.find(id)).toBeNull();
        expect(await r1.get({ namespace: 'ns', tenant: 't', id })).toBeNull();
        // The update either landed before the delete or found nothing.
        if (updated) expect(updated.record.count).toBe(1);
      }
      expect(await ids(r0)).toEqual([]);
    });

    it('a stale update never overwrites the record created again with the same id', async () => {
      const [r0, r1] = [repo(0), repo(1)];
      await r0.create(note('x', { count: 1 }));
      const stale = await r0.get({ namespace: 'ns', tenant: 't', id: 'x' });
      await r1.remove('x');
      expect(await r1.create(note('x', { count: 2 }))).toBe('created');
      // A compare-and-swap from the version read before the delete: the tombstone moved the version on.
      expect(stale && (await r0.swap(stale, { ...stale.record, count: 99 }))).toBeNull();
      expect((await r1.find('x'))?.record.count).toBe(2);
      expect((await r1.find('x'))?.version).toBe(3);
    });

    it('reports unreadable records and skips them', async () => {
      const r = repo(0);
      await r.create(note('ok'));
      await r.create(note('broken'));
      await pair!.stores[0].compareAndSwap(r.keys.record({ namespace: 'ns', tenant: 't', id: 'broken' }), 1, '{not json');
      const listed = await r.listAll();
      expect(listed.records.map((s) => s.record)).toEqual([note('ok')]);
      expect(listed.bad).toEqual([{ namespace: 'ns', tenant: 't', id: 'broken' }]);
      // An unreadable record can still be deleted.
      expect(await r.remove('broken')).toBe(true);
      expect((await r.listAll()).bad).toEqual([]);
    });

    it('evicts what a create that died half-way left, once it is old', async () => {
      const r = repo(0, { uniqueName: () => 'pair', maxPerScope: 2, staleClaimMs: 60_000 });
      const state = pair!.stores[0];
      // A dead create of "ghost": every claim and the listing entry, but no record.
      const scope = { namespace: 'ns', tenant: 't' };
      await state.indexAdd(r.keys.idClaim({ ...scope, id: 'ghost' }, true), JSON.stringify(['ns', 't']), clock.now());
      await state.indexAdd(r.keys.unique(scope, 'pair'), 'ghost', clock.now());
      await state.indexAdd(r.keys.scopeIndex(scope), 'ghost', clock.now());
      await state.indexAdd(r.keys.scopeIndex(scope), 'ghost2', clock.now());
      await state.indexAdd(r.keys.all, JSON.stringify(['ns', 't', 'ghost']), clock.now());
      // While it may still be in flight, it blocks.
      expect(await r.create(note('ghost'))).toBe('id-taken');
      expect(await r.create(note('real'))).toBe('unique-taken');
      expect(await ids(r)).toEqual([]);
      clock.advance(60_001);
      expect(await r.create(note('real'))).toBe('created');
      expect(await r.remove('real')).toBe(true);
      expect(await r.create(note('ghost'))).toBe('created');
      expect(await ids(r)).toEqual(['ghost']);
      expect(await state.indexCount(r.keys.all)).toBe(1);
    });

    it('a create racing a delete of the same id: the new record keeps its claims', async () => {
      const opts = { uniqueName: () => 'pair' };
      const [r0, r1] = [repo(0, opts), repo(1, opts)];
      const scope = { namespace: 'ns', tenant: 't' };
      await r0.create(note('x', { count: 1 }));
      // Long after its create, so every claim of the old record is old enough to evict.
      clock.advance(3_600_000);
      const { store, beforeNext } = racingStore(pair!.stores[0], 'indexRemoveIf');
      const deleting = repo(0, { ...opts, state: store });
      let created: string | undefined;
      // Between the tombstone and the delete's first release, another replica creates x again.
      beforeNext(async () => (created = await r1.create(note('x', { count: 2 }))));
      expect(await deleting.remove('x')).toBe(true);
      expect(created).toBe('created');
      expect((await r0.find('x'))?.record.count).toBe(2);
      expect((await r0.list(scope)).records.map((s) => s.record.id)).toEqual(['x']);
      expect(await ids(r0)).toEqual(['x']);
      // Its unique name and id are still held: the delete gave back only the old record's claims.
      expect(await r0.create(note('y'))).toBe('unique-taken');
      expect(await r0.create(note('x', { tenant: 'u' }))).toBe('id-taken');
    });

    it('fences off a create presumed dead, so it cannot land after another took its place', async () => {
      const opts = { uniqueName: () => 'pair', staleClaimMs: 60_000 };
      const [r0, r1] = [repo(0, opts), repo(1, opts)];
      const { store, beforeNext } = racingStore(pair!.stores[0], 'compareAndSwap');
      const slow = repo(0, { ...opts, state: store });
      let other: string | undefined;
      // The slow create has taken every claim; before its record write, a minute passes and another replica creates.
      beforeNext(async () => {
        clock.advance(60_001);
        other = await r1.create(note('s', { count: 2, tenant: 'u' }));
      });
      expect(await slow.create(note('s', { count: 1 }))).toBe('id-taken');
      expect(other).toBe('created');
      expect((await r0.find('s'))?.record).toEqual(note('s', { count: 2, tenant: 'u' }));
      expect(await r0.get({ namespace: 'ns', tenant: 't', id: 's' })).toBeNull();
      expect(await ids(r0)).toEqual(['s']);
      expect(await r0.create(note('t', { tenant: 'u' }))).toBe('unique-taken');
    });

    it('lists every record past the first page while dropping leftovers', async () => {
      const r = repo(0, { globalIds: false });
      const state = pair!.stores[0];
      for (let i = 0; i < 3; i++) await state.indexAdd(r.keys.all, JSON.stringify(['ns', 't', `dead-${i}`]), clock.now() - 120_000);
      for (let i = 0; i < 502; i++) expect(await r.create(note(`n${String(i).padStart(3, '0')}`))).toBe('created');
      expect((await r.listAll()).records).toHaveLength(502);
      expect(await state.indexCount(r.keys.all)).toBe(502);
      expect((await r.list({ namespace: 'ns', tenant: 't' })).records).toHaveLength(502);
    });

    it('shows a write on one replica to a watcher on the other', async () => {
      const seen: string[][] = [];
      let writerLoads = 0;
      const writer = repo(0, { sync: { intervalMs: 60_000, log: silentLog, reload: async () => void writerLoads++ } });
      const watcher: RecordRepository<Note> = repo(1, { sync: { intervalMs: 60_000, log: silentLog, reload: async () => void seen.push(await ids(watcher)) } });
      await writer.start();
      await watcher.start();
      expect(seen).toEqual([[]]);
      await writer.create(note('w'));
      // The writer reloads before its create returns (and may hear its own broadcast); the other replica on the broadcast.
      expect(writerLoads).toBeGreaterThanOrEqual(2);
      await expect.poll(() => seen.at(-1)).toEqual(['w']);
      await writer.update('w', (n) => ({ ...n, count: 1 }));
      await writer.remove('w');
      await expect.poll(() => seen.at(-1)).toEqual([]);
    });

    it('catches an edit that lands while a replica is starting', async () => {
      let loads = 0;
      const writer = repo(0, { sync: { intervalMs: 1000, log: silentLog, reload: async () => {} } });
      let seen: string[] = [];
      const starting: RecordRepository<Note> = repo(1, {
        sync: {
          intervalMs: 1000,
          log: silentLog,
          reload: async () => {
            // The first load reads the store, then another replica's edit lands before it ends.
            seen = await ids(starting);
            if (loads++ === 0) await writer.create(note('during'));
          },
        },
      });
      await writer.start();
      await starting.start();
      clock.advance(1000);
      await expect.poll(() => seen).toEqual(['during']);
    });

    it('catches up from the generation when a broadcast is lost', async () => {
      let loads = 0;
      const writer = repo(0, { sync: { intervalMs: 1000, log: silentLog, reload: async () => {} } });
      const deaf = repo(1, { sync: { intervalMs: 1000, log: silentLog, reload: async () => void loads++ } });
      await writer.start();
      await deaf.start();
      // A bump of the generation alone, as when the broadcast of a write was lost.
      await pair!.stores[0].set(writer.keys.generation, 'moved-on');
      expect(loads).toBe(1);
      clock.advance(1000);
      await expect.poll(() => loads).toBe(2);
    });

    it('checks the generation once at a time: ticks that find a check in flight are skipped', async () => {
      const state = pair!.stores[1];
      let reads = 0;
      let lastRead: Promise<unknown> = Promise.resolve();
      // The store as the repository sees it, counting reads of the generation.
      const counted = new Proxy(state, {
        get(target, prop) {
          if (prop === 'get')
            return (key: Parameters<StateStore['get']>[0]) => {
              reads++;
              lastRead = target.get(key);
              return lastRead;
            };
          const value: unknown = Reflect.get(target, prop);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const r = repo(1, { state: counted, sync: { intervalMs: 1000, log: silentLog, reload: async () => {} } });
      await r.start();
      reads = 0;
      // A minute of one-second steps, each firing the poll, before the first read answers.
      for (let second = 0; second < 60; second++) clock.advance(1000);
      expect(reads).toBe(1);
      // The check ends once its read has answered (and the turn that follows has run).
      await lastRead;
      await new Promise((resolve) => setImmediate(resolve));
      clock.advance(1000);
      await expect.poll(() => reads).toBe(2);
    });
  });
}
