import type { StoreQuery } from '@sluice/audit';
import { AuditFilterFields, type AuditRecord } from '@sluice/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newestFirst } from '../../audit/test/support/records.js';
import { startPostgresServer, type RunningPostgres } from '../../../test/support/postgres-server.js';
import { ensurePartitions, migrate, PgAuditRecords } from '../src/index.js';
import { appendedRecords } from './support/appended-records.js';

const BASE = Date.UTC(2026, 10, 20, 12);
const N = 120;

/** What a page must hold: the model answer, filtered and sorted in JS. */
function expected(all: readonly AuditRecord[], q: Omit<StoreQuery, 'limit' | 'offset'>, nowMs: number): AuditRecord[] {
  return all
    .filter((r) => AuditFilterFields.every((f) => q[f] === undefined || r[f] === q[f]))
    .filter((r) => q.fromMs === undefined || Date.parse(r.dispatched_at) >= q.fromMs)
    .filter((r) => q.toMs === undefined || Date.parse(r.dispatched_at) <= q.toMs)
    .filter((r) => r.expires_at === null || Date.parse(r.expires_at) > nowMs)
    .filter((r) => q.visible?.(r) ?? true)
    .sort(newestFirst);
}

describe('PostgreSQL audit records: insert, lookup, pages', () => {
  let server: RunningPostgres;
  let pool: pg.Pool;
  let records: PgAuditRecords;
  const all: AuditRecord[] = [];
  const now = BASE + 200_000;

  beforeAll(async () => {
    server = await startPostgresServer();
    pool = new pg.Pool({ connectionString: await server.createDatabase('records'), max: 4 });
    await migrate(pool, 'trail');
    await ensurePartitions(pool, 'trail', BASE - 86_400_000, 3);
    records = new PgAuditRecords(pool, 'trail');
    // Every 10th record expired by `now`; the rest kept for an hour or for ever.
    all.push(...(await appendedRecords(N, BASE, (i) => (i % 10 === 0 ? 50_000 : i % 2 === 0 ? 3_600_000 : null))));
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await server?.stop();
  });

  it('inserts a batch once: a re-delivered batch adds nothing', async () => {
    expect(await records.insert(all.slice(0, 70))).toBe(70);
    expect(await records.insert(all)).toBe(N - 70);
    expect(await records.insert(all)).toBe(0);
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM trail.audit_records');
    expect(rows[0].n).toBe(N);
  });

  it('gives each record back field for field, newest first by action id', async () => {
    const sample = all[37] as AuditRecord;
    expect(await records.byActionId(sample.action_id, 10)).toEqual([sample]);
    expect(await records.byActionId('no-such-action', 10)).toEqual([]);
  });

  it.each<[string, Omit<StoreQuery, 'limit' | 'offset'>]>([
    ['no filter', {}],
    ['one tenant', { namespace: 'ns-a', tenant: 't1' }],
    ['tenant without namespace', { tenant: 't2' }],
    ['every other filter', { provider: 'sms', outcome: 'executed' }],
    ['sparse ids', { trace_id: 'a'.repeat(32) }],
    ['matched rule and caller', { matched_rule: 'rule-a', caller_id: 'bob' }],
    ['window', { fromMs: BASE + 10_000, toMs: BASE + 20_000 }],
  ])('answers %s with an exact total and newest-first pages', async (_name, filters) => {
    const want = expected(all, filters, now);
    const first = await records.query({ ...filters, limit: 5, offset: 0 }, now);
    // The total counts expired records not deleted yet (an index alone answers it).
    expect(first.total).toBe(expected(all, filters, Number.NEGATIVE_INFINITY).length);
    expect(first.records).toEqual(want.slice(0, 5));
    const third = await records.query({ ...filters, limit: 5, offset: 10 }, now);
    expect(third.records).toEqual(want.slice(10, 15));
  });

  it('walks every record once with cursors, through runs of equal timestamps', async () => {
    const want = expected(all, {}, now);
    const seen: AuditRecord[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const page = await records.query({ limit: 7, offset: 0, ...(cursor ? { cursor } : {}) }, now);
      if (cursor !== undefined) expect(page.total).toBeUndefined();
      seen.push(...page.records);
      cursor = page.next_cursor;
      if (cursor === undefined) break;
    }
    expect(seen.map((r) => r.id)).toEqual(want.map((r) => r.id));
  });

  it('applies a visible predicate before paging, and its cursors still cover everything', async () => {
    const visible = (r: AuditRecord) => r.caller_id !== 'alice' && r.tenant !== 't3';
    const want = expected(all, { visible }, now);
    const seen: AuditRecord[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const page = await records.query({ limit: 4, offset: 0, visible, ...(cursor ? { cursor } : {}) }, now);
      expect(page.total).toBeUndefined();
      seen.push(...page.records);
      cursor = page.next_cursor;
      if (cursor === undefined) break;
    }
    expect(seen).toEqual(want);
    expect((await records.query({ limit: 3, offset: 2, visible }, now)).records).toEqual(want.slice(2, 5));
  });

  it('counts a total up to its bound, and leaves it out above', async () => {
    const bounded = (maxCounted: number) => new PgAuditRecords(pool, 'trail', { maxCounted }).query({ limit: 5, offset: 0 }, now);
    expect((await bounded(N)).total).toBe(N);
    const over = await bounded(N - 1);
    expect(over.total).toBeUndefined();
    expect(over.records).toHaveLength(5);
    expect(over.next_cursor).toBeDefined();
  });

  it('hides expired records before they are deleted (the total, read from an index alone, still counts them)', async () => {
    const expired = all.filter((r) => r.expires_at !== null && Date.parse(r.expires_at) <= now);
    expect(expired.length).toBeGreaterThan(0);
    const page = await records.query({ limit: 1000, offset: 0 }, now);
    expect(page.records.map((r) => r.id).some((id) => expired.some((e) => e.id === id))).toBe(false);
    expect(page.records).toHaveLength(N - expired.length);
    expect(page.total).toBe(N);
  });
});
