import { AnalyticsRollups, CoverageRollups } from '@sluice/audit';
import { ManualClock, type AuditRecord, type NewAuditRecord } from '@sluice/core';
import { MemoryStateStore } from '@sluice/state';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyticsContract } from '../../audit/test/analytics.contract.js';
import { END as ANALYTICS_END } from '../../audit/test/analytics.dataset.js';
import { coverageContract } from '../../audit/test/coverage.contract.js';
import { END as COVERAGE_END } from '../../audit/test/coverage.dataset.js';
import { draft } from '../../audit/test/support/records.js';
import { startPostgresServer, type RunningPostgres } from '../../../test/support/postgres-server.js';
import { ensurePartitions, migrate, PgAuditRecords, PgAuditStore, type PgAuditStoreOptions } from '../src/index.js';
import { appendedRecords } from './support/appended-records.js';

/*
 * Schema version 4: the analytics and coverage rollups kept in PostgreSQL by the statement that
 * inserts the records. The rollup contracts (against a brute force over the same records) with
 * the records written through the trail's real append and ingest, some counted in the state
 * store as a release before version 4 did; then what only this backend
 * does: counting each record once however often its batch arrives, leaving out buckets past
 * retention, and deleting them when they expire.
 */

const DAY_MS = 86_400_000;
/** Appends in flight while a data set is written. */
const IN_FLIGHT = 500;

let server: RunningPostgres;
let pool: pg.Pool;
let schemas = 0;
beforeAll(async () => {
  server = await startPostgresServer();
  pool = new pg.Pool({ connectionString: await server.createDatabase('rollups'), max: 6 });
}, 60_000);
afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

/** A trail in a new schema, on the memory backend (the one-process ingest), its clock at `nowMs`. */
async function trailAt(
  nowMs: number,
  rollups?: PgAuditStoreOptions['rollups'],
): Promise<{ store: PgAuditStore; state: MemoryStateStore; schema: string; clock: ManualClock; close(): Promise<void> }> {
  const schema = `rollups_${++schemas}`;
  await migrate(pool, schema);
  const clock = new ManualClock(nowMs);
  const state = new MemoryStateStore({ clock });
  const store = new PgAuditStore(state, { pool, schema, clock, ...(rollups ? { rollups } : {}) });
  return {
    store,
    state,
    schema,
    clock,
    close: async () => {
      await store.close();
      await state.close();
    },
  };
}

/** Appends the drafts (as the gateway's recorder does) and waits until the ingest has stored them all. */
async function appendAll(store: PgAuditStore, drafts: readonly NewAuditRecord[]): Promise<void> {
  for (let i = 0; i < drafts.length; i += IN_FLIGHT) {
    await Promise.all(drafts.slice(i, i + IN_FLIGHT).map((d) => store.append(d, { ttlMs: null, chain: false })));
  }
  expect(await store.catchUp()).toBe(true);
}

/**
 * Writes every third record into the state store's rollups, as a release before schema version 4
 * counted it (a rolling upgrade: old workers still indexing), and appends the rest to the trail:
 * the contracts then hold only if the two sources add up.
 */
function writeSplit<R extends Partial<NewAuditRecord>>(trail: { store: PgAuditStore }, countBefore: (record: R) => Promise<void>) {
  return async (records: R[]): Promise<void> => {
    await Promise.all(records.filter((_, i) => i % 3 === 0).map(countBefore));
    const drafts = records.filter((_, i) => i % 3 !== 0).map((r) => draft({ ...r, dispatchedAtMs: Date.parse(r.dispatched_at as string) }));
    await appendAll(trail.store, drafts);
  };
}

analyticsContract('postgresql (rollup table kept by the ingest, and rollups counted before it)', async () => {
  const trail = await trailAt(ANALYTICS_END);
  const before = new AnalyticsRollups({ state: trail.state, clock: trail.clock });
  return {
    rollups: new AnalyticsRollups({ state: trail.state, clock: trail.clock, source: trail.store.analyticsSource(), beforeRead: () => trail.store.catchUp() }),
    recordAll: writeSplit(trail, (r) => before.record(r)),
    cleanup: () => trail.close(),
  };
});

coverageContract('postgresql (coverage table kept by the ingest, and counters counted before it)', async () => {
  const trail = await trailAt(COVERAGE_END);
  const before = new CoverageRollups({ state: trail.state, clock: trail.clock });
  return {
    rollups: new CoverageRollups({ state: trail.state, clock: trail.clock, source: trail.store.coverageSource(), beforeRead: () => trail.store.catchUp() }),
    recordAll: writeSplit(trail, (r) => before.record(r)),
    cleanup: () => trail.close(),
  };
});

describe('PostgreSQL rollups: counted once, within retention', () => {
  const BASE = Date.UTC(2026, 10, 20, 12);
  const sumOf = async (sql: string) => Number((await pool.query<{ n: string | null }>(sql)).rows[0]?.n ?? 0);

  it('counts a record once when its batch is inserted again (a re-delivery), or twice at once by two writers', async () => {
    const schema = `rollups_${++schemas}`;
    await migrate(pool, schema);
    await ensurePartitions(pool, schema, BASE - DAY_MS, 3);
    const records: AuditRecord[] = await appendedRecords(400, BASE);
    const retention = { hour: 35 * DAY_MS, day: 400 * DAY_MS };
    const writer = () => new PgAuditRecords(pool, schema, { rollups: retention, now: () => BASE });
    expect(await writer().insert(records.slice(0, 150))).toBe(150);
    // Two writers with overlapping batches at once, then the whole set again.
    const [a, b] = await Promise.all([writer().insert(records.slice(100, 300)), writer().insert(records.slice(50, 400))]);
    expect(a + b).toBe(250);
    expect(await writer().insert(records)).toBe(0);
    for (const granularity of ['h', 'd']) {
      expect(await sumOf(`SELECT sum(actions) AS n FROM ${schema}.audit_rollups WHERE granularity = '${granularity}'`)).toBe(400);
    }
    expect(await sumOf(`SELECT sum(actions) AS n FROM ${schema}.audit_coverage`)).toBe(400);
    const micros = records.reduce((s, r) => s + Math.round(r.duration_ms * 1000), 0);
    expect(await sumOf(`SELECT sum(micros) AS n FROM ${schema}.audit_rollups WHERE granularity = 'h'`)).toBe(micros);
  });

  it('leaves out buckets already past retention, and deletes the ones that expire', async () => {
    // The clock 3 days after the records: hourly rollups kept 1 day are already gone, daily ones (3 days) not yet.
    const trail = await trailAt(BASE + 3 * DAY_MS, { retentionDays: 3, hourlyRetentionDays: 1 });
    const { store } = trail;
    await appendAll(
      store,
      Array.from({ length: 20 }, (_, i) => draft({ action_id: `a${i}`, dispatchedAtMs: BASE + i * 60_000 })),
    );
    const count = (g: string) => sumOf(`SELECT sum(actions) AS n FROM ${trail.schema}.audit_rollups WHERE granularity = '${g}'`);
    expect([await count('h'), await count('d')]).toEqual([0, 20]);
    expect(await sumOf(`SELECT sum(actions) AS n FROM ${trail.schema}.audit_coverage`)).toBe(20);
    // A day later the daily bucket and the coverage day have expired too: the next sweep deletes them.
    trail.clock.set(BASE + 4 * DAY_MS);
    await store.expire(trail.clock.now(), 100);
    expect(await sumOf(`SELECT count(*) AS n FROM ${trail.schema}.audit_rollups`)).toBe(0);
    expect(await sumOf(`SELECT count(*) AS n FROM ${trail.schema}.audit_coverage`)).toBe(0);
    await trail.close();
  });
});
