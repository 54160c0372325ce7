import { auditKeys } from '@sluice/audit';
import { ManualClock, type AuditRecord } from '@sluice/core';
import { MemoryStateStore, RedisStateStore, type StateStore } from '@sluice/state';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { draft } from '../../audit/test/support/records.js';
import { deleteKeys } from '../../../test/support/delete-keys.js';
import { startPostgresServer, type RunningPostgres } from '../../../test/support/postgres-server.js';
import { testRedisUrl, uniquePrefix } from '../../../test/support/redis-url.js';
import { migrate, PgAuditStore } from '../src/index.js';

/*
 * How records travel into PostgreSQL: findable by id at once (from the state), moved out of the
 * state once stored, held back (and still findable) while the database is away, and a record
 * PostgreSQL cannot hold refused alone.
 */

const NOW = Date.UTC(2026, 10, 26, 12);

describe('PostgreSQL audit ingest', () => {
  let server: RunningPostgres;
  let pool: pg.Pool;
  beforeAll(async () => {
    server = await startPostgresServer();
    pool = new pg.Pool({ connectionString: await server.createDatabase('ingest'), max: 4 });
    // The test takes the server down: the pool's idle connections are cut (an 'error' event each).
    pool.on('error', () => {});
    await migrate(pool, 'trail');
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await server?.stop();
  });

  const rowCount = async () => Number((await pool.query('SELECT count(*) AS n FROM trail.audit_records')).rows[0].n);
  const ids = (records: readonly (AuditRecord | null)[]) => records.map((r) => r?.id ?? null);

  for (const backend of ['memory', 'redis'] as const) {
    describe(`through ${backend}`, () => {
      let state: StateStore;
      /** Redis only: the raw client, to see what the state still holds. */
      let redis: RedisStateStore | null = null;
      let prefix = '';
      let store: PgAuditStore;
      const clock = new ManualClock(NOW);
      beforeAll(async () => {
        prefix = uniquePrefix();
        redis = backend === 'redis' ? await RedisStateStore.connect({ url: testRedisUrl(), prefix }) : null;
        state = redis ?? new MemoryStateStore({ clock });
        // A batch left behind by a failed read is taken over again quickly (the default is 10 s).
        store = new PgAuditStore(state, { pool, schema: 'trail', clock, ingest: { claimIdleMs: 50 } });
      });
      afterEach(async () => {
        await pool.query('TRUNCATE trail.audit_records');
      });
      afterAll(async () => {
        await store.close();
        if (redis !== null) await deleteKeys(redis.client, `${prefix}:*`);
        await state.close();
      });
      /** Record values and action pointers left in the state. */
      const leftInState = async () => {
        if (redis === null) return 0;
        const keys = await redis.client.keys(`${prefix}:*`);
        return keys.filter((k) => k.includes(`:${auditKeys.KIND.record}:`) || k.includes(`:${auditKeys.KIND.actionPointer}:`)).length;
      };
      const appendSome = async (n: number, tag: string) => {
        const appended: AuditRecord[] = [];
        for (let i = 0; i < n; i++)
          appended.push(await store.append(draft({ action_id: `${tag}-${i}`, dispatchedAtMs: NOW + i }), { ttlMs: null, chain: i % 2 === 0 }));
        return appended;
      };

      it('finds a record by id before and after it moves, and leaves nothing of it in the state', async () => {
        const appended = await appendSome(20, 'move');
        expect(ids(await Promise.all(appended.map((r) => store.get(r.action_id))))).toEqual(ids(appended));
        expect(await store.catchUp()).toBe(true);
        expect(await rowCount()).toBe(20);
        expect(await leftInState()).toBe(0);
        expect(ids(await Promise.all(appended.map((r) => store.get(r.action_id))))).toEqual(ids(appended));
        expect(await store.verify({ namespace: 'ns', tenant: 't1' })).toMatchObject({ valid: true, records_checked: 10 });
      });

      it('holds records back while PostgreSQL is away, findable by id, and stores each once when it is back', async () => {
        const before = await appendSome(5, 'early');
        await store.catchUp();
        await server.down();
        let during: AuditRecord[] = [];
        try {
          during = await appendSome(30, 'during');
          // Not movable now: a query fails, nothing is lost, every record is still found by id.
          await expect(store.query({ limit: 10, offset: 0 })).rejects.toThrow();
          expect(ids(await Promise.all(during.map((r) => store.get(r.action_id))))).toEqual(ids(during));
          await expect(store.get('early-0')).rejects.toThrow(); // moved already: only the table has it
        } finally {
          await server.up();
        }
        await expect.poll(async () => (await store.catchUp().catch(() => false)) && (await rowCount()), { timeout: 15_000 }).toBe(35);
        const page = await store.query({ limit: 100, offset: 0 });
        expect(page.total).toBe(35);
        expect(new Set(page.records.map((r) => r.id))).toEqual(new Set([...before, ...during].map((r) => r.id)));
        expect(await leftInState()).toBe(0);
        expect(await store.verify({ namespace: 'ns', tenant: 't1' })).toMatchObject({ valid: true });
      }, 60_000);

      it('refuses alone a record PostgreSQL cannot hold (a NUL character in a column), keeps it findable, and stores the rest', async () => {
        const good = await appendSome(4, 'good');
        // In the body (compressed bytes) a NUL is stored as it is; in a text column PostgreSQL refuses it.
        good.push(
          await store.append(draft({ action_id: 'nul-body', dispatchedAtMs: NOW + 40, action_payload: { text: 'a\u0000b' } }), { ttlMs: null, chain: false }),
        );
        const bad = await store.append(draft({ action_id: 'nul', dispatchedAtMs: NOW + 50, caller_id: 'a\u0000b' }), { ttlMs: null, chain: false });
        expect(await store.catchUp()).toBe(true);
        expect(await rowCount()).toBe(5);
        expect((await store.query({ limit: 10, offset: 0 })).records.map((r) => r.id).sort()).toEqual(good.map((r) => r.id).sort());
        expect((await store.get('nul-body'))?.action_payload).toEqual({ text: 'a\u0000b' });
        // On Redis it stays in the state, where get finds it; one process drops it (reported).
        expect((await store.get('nul'))?.id ?? null).toBe(backend === 'redis' ? bad.id : null);
      });
    });
  }
});
