import { deflateRawSync } from 'node:zlib';
import type { AuditRecord } from '@sluice/core';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newestFirst } from '../../audit/test/support/records.js';
import { startPostgresServer, type RunningPostgres } from '../../../test/support/postgres-server.js';
import { dayStart, ensurePartitions, migrate, MIGRATIONS, partitionName, PgAuditRecords } from '../src/index.js';
import { bodyJson } from '../src/record-columns.js';
import { appendedRecords } from './support/appended-records.js';

/*
 * Schema version 3: bodies compressed against dictionaries the writers train and store (Zstandard
 * frames; raw deflate before), rows of version 2 (jsonb bodies) still read after the upgrade, and
 * the narrow hashed indexes used.
 */

const BASE = Date.UTC(2026, 10, 20, 12);
const DAY_MS = 86_400_000;

describe('PostgreSQL audit records: compressed bodies', () => {
  let server: RunningPostgres;
  let pool: pg.Pool;
  const all: AuditRecord[] = [];
  let schema = '';
  let schemas = 0;

  beforeAll(async () => {
    server = await startPostgresServer();
    pool = new pg.Pool({ connectionString: await server.createDatabase('bodies'), max: 4 });
    all.push(...(await appendedRecords(300, BASE)));
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await server?.stop();
  });
  afterEach(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });
  const freshSchema = async (migrations = MIGRATIONS) => {
    schema = `bodies_${++schemas}`;
    await migrate(pool, schema, migrations);
    if (migrations === MIGRATIONS) await ensurePartitions(pool, schema, BASE - DAY_MS, 3);
    else {
      // Partitions as the release before version 3 made them (no key statistics: their columns did not exist).
      for (let i = 0, day = dayStart(BASE - DAY_MS); i < 3; i++, day += DAY_MS) {
        const range = `FROM ('${new Date(day).toISOString()}') TO ('${new Date(day + DAY_MS).toISOString()}')`;
        await pool.query(`CREATE TABLE ${schema}.${partitionName(day)} PARTITION OF ${schema}.audit_records FOR VALUES ${range}`);
      }
    }
    return schema;
  };
  const dictionaries = async () =>
    (await pool.query<{ id: number; sample_records: number }>(`SELECT id, sample_records FROM ${schema}.audit_dictionaries ORDER BY id`)).rows;
  /** Partitions with the statistics of their hashed keys. */
  const keyStatisticsCount = async () =>
    (
      await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_statistic_ext s JOIN pg_namespace n ON n.oid = s.stxnamespace WHERE n.nspname = $1 AND s.stxname LIKE '%_keys'`,
        [schema],
      )
    ).rows[0]?.n;
  const rowsByDictionary = async () =>
    (await pool.query<{ body_dict: number | null; n: number }>(`SELECT body_dict, count(*)::int AS n FROM ${schema}.audit_records GROUP BY 1 ORDER BY 1`)).rows;

  it('stores bodies compressed against a dictionary it trains, at a fraction of their JSON, and gives them back exactly', async () => {
    await freshSchema();
    const records = new PgAuditRecords(pool, schema);
    expect(await records.insert(all)).toBe(all.length);
    expect(await dictionaries()).toEqual([{ id: 1, sample_records: 256 }]);
    expect(await rowsByDictionary()).toEqual([{ body_dict: 1, n: all.length }]);
    const { rows } = await pool.query<{ stored: number; jsonb: number }>(
      `SELECT avg(octet_length(body_z))::float8 AS stored, count(body)::int AS jsonb FROM ${schema}.audit_records`,
    );
    const json = all.reduce((sum, r) => sum + bodyJson(r).length, 0) / all.length;
    expect(rows[0]?.stored).toBeLessThan(json / 3);
    expect(rows[0]?.jsonb).toBe(0);
    const page = await new PgAuditRecords(pool, schema).query({ limit: 1000, offset: 0 }, BASE);
    expect(page.records).toEqual([...all].sort(newestFirst));
  });

  it('reads bodies schema version 3 wrote (raw deflate, with and without a dictionary) beside the Zstandard frames written now', async () => {
    await freshSchema();
    const records = new PgAuditRecords(pool, schema);
    await records.insert(all.slice(0, 100));
    const { rows } = await pool.query<{ dictionary: Buffer }>(`SELECT dictionary FROM ${schema}.audit_dictionaries WHERE id = 1`);
    const dictionary = (rows[0] as { dictionary: Buffer }).dictionary;
    // Rewrite some rows as version 3 stored them: deflate against their dictionary, or alone.
    for (const [i, record] of all.slice(0, 20).entries()) {
      const body = Buffer.from(bodyJson(record));
      const deflated = i % 2 === 0 ? deflateRawSync(body, { level: 1, dictionary }) : deflateRawSync(body, { level: 1 });
      await pool.query(`UPDATE ${schema}.audit_records SET body_z = $1, body_dict = $2 WHERE id = $3`, [deflated, i % 2 === 0 ? 1 : null, record.id]);
    }
    const { rows: frames } = await pool.query<{ zstd: number }>(
      `SELECT count(*) FILTER (WHERE substring(body_z FROM 1 FOR 4) = '\\x28b52ffd'::bytea)::int AS zstd FROM ${schema}.audit_records`,
    );
    expect(frames[0]?.zstd).toBe(80);
    const page = await new PgAuditRecords(pool, schema).query({ limit: 1000, offset: 0 }, BASE);
    expect(page.records).toEqual(all.slice(0, 100).sort(newestFirst));
  });

  it('shares the newest dictionary between writers, trains another once it is old or its sample was small, and reads rows of every one', async () => {
    await freshSchema();
    let nowMs = BASE;
    const writer = (sampleSize = 256) => new PgAuditRecords(pool, schema, { bodies: { now: () => nowMs, maxAgeMs: DAY_MS, sampleSize } });
    // A first small batch: a dictionary from 10 bodies, trained again once 20 are at hand.
    const first = writer();
    await first.insert(all.slice(0, 10));
    await first.insert(all.slice(10, 15));
    expect(await dictionaries()).toEqual([{ id: 1, sample_records: 10 }]);
    await first.insert(all.slice(15, 40));
    expect(await dictionaries()).toEqual([
      { id: 1, sample_records: 10 },
      { id: 2, sample_records: 40 },
    ]);
    // Another process takes the newest stored, as long as it is fit.
    const second = writer(40);
    await second.insert(all.slice(40, 100));
    expect((await dictionaries()).length).toBe(2);
    // A day later, the next batch brings a new one.
    nowMs += DAY_MS;
    await second.insert(all.slice(100, 300));
    expect((await dictionaries()).map((d) => d.id)).toEqual([1, 2, 3]);
    expect(await rowsByDictionary()).toEqual([
      { body_dict: 1, n: 15 },
      { body_dict: 2, n: 85 },
      { body_dict: 3, n: 200 },
    ]);
    // A reader that has seen none of them loads each as needed.
    expect((await writer().query({ limit: 1000, offset: 0 }, BASE)).records).toEqual([...all].sort(newestFirst));
    expect(await writer().byActionId((all[3] as AuditRecord).action_id, 10)).toEqual([all[3]]);
  });

  it('reads the jsonb rows written before version 3 beside the compressed ones, after the upgrade', async () => {
    await freshSchema(MIGRATIONS.filter((m) => m.version <= 2));
    // Rows as version 2 wrote them: the body as jsonb.
    const old = all.slice(0, 150);
    const fields = ['id', 'dispatched_at', 'action_id', 'namespace', 'tenant', 'provider', 'action_type', 'verdict', 'outcome'] as const;
    const nullable = ['matched_rule', 'caller_id', 'chain_id', 'trace_id', 'expires_at', 'sequence_number'] as const;
    for (const record of old) {
      const body = Object.fromEntries(
        Object.entries(record).filter(([k]) => !(fields as readonly string[]).includes(k) && !(nullable as readonly string[]).includes(k)),
      );
      const values = [...fields, ...nullable].map((f) => record[f] ?? null);
      await pool.query(
        `INSERT INTO ${schema}.audit_records (${[...fields, ...nullable, 'body'].join(', ')}) VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')}, $${values.length + 1})`,
        [...values, body],
      );
    }
    expect(await migrate(pool, schema)).toMatchObject({ from: 2, applied: [3, 4] });
    const records = new PgAuditRecords(pool, schema);
    await records.insert(all.slice(150));
    expect(await rowsByDictionary()).toEqual([
      { body_dict: 1, n: 150 },
      { body_dict: null, n: 150 },
    ]);
    expect((await records.query({ limit: 1000, offset: 0 }, BASE)).records).toEqual([...all].sort(newestFirst));
    const tenantPage = await records.query({ namespace: 'ns-a', tenant: 't2', limit: 1000, offset: 0 }, BASE);
    expect(tenantPage.records).toEqual(all.filter((r) => r.namespace === 'ns-a' && r.tenant === 't2').sort(newestFirst));
    expect(await records.byActionId((all[7] as AuditRecord).action_id, 10)).toEqual([all[7]]);
    // The partitions made before the upgrade got their key statistics too.
    expect(await keyStatisticsCount()).toBe(3);
    // A row with neither body is refused.
    await expect(pool.query(`UPDATE ${schema}.audit_records SET body = NULL WHERE id = $1`, [(all[0] as AuditRecord).id])).rejects.toThrow(
      /audit_records_has_body/,
    );
  });

  it('answers tenant pages and lookups by id through the hashed indexes', async () => {
    await freshSchema();
    await new PgAuditRecords(pool, schema).insert(all);
    // Vacuumed: pages all-visible, as autovacuum leaves an insert-only table, so that an index answers a count alone.
    await pool.query(`VACUUM ANALYZE ${schema}.audit_records`);
    expect(await keyStatisticsCount()).toBe(3);
    // With them, the planner knows a scope's hash follows from its columns: the rows it expects
    // are the scope's (~50 of the day), not their product with the columns' selectivity (~8).
    const day = `audit_records_p${new Date(BASE).toISOString().slice(0, 10).replaceAll('-', '')}`;
    const estimate = await pool.query(
      `EXPLAIN (FORMAT JSON) SELECT id FROM ${schema}.${day} WHERE namespace = 'ns-a' AND tenant = 't1' AND scope_key = hashtextextended('ns-a'::text || '/' || 't1'::text, 0)`,
    );
    const scope = all.filter((r) => r.namespace === 'ns-a' && r.tenant === 't1').length;
    expect(estimate.rows[0]['QUERY PLAN'][0].Plan['Plan Rows']).toBeGreaterThan(scope / 2);
    const client = await pool.connect();
    try {
      // Few rows: the planner would read the table whole; without that choice it must pick an index.
      await client.query('SET enable_seqscan = off');
      /** The index conditions of the plan's scans. */
      const indexConditions = async (where: string) => {
        const { rows } = await client.query(
          `EXPLAIN (FORMAT JSON) SELECT id FROM ${schema}.audit_records WHERE ${where} ORDER BY dispatched_at DESC, id DESC LIMIT 50`,
        );
        return [...JSON.stringify(rows).matchAll(/"Index Cond":"([^"]*)"/g)].map((m) => m[1]).join(' ');
      };
      expect(await indexConditions(`scope_key = hashtextextended('ns-a'::text || '/' || 't1'::text, 0) AND namespace = 'ns-a' AND tenant = 't1'`)).toContain(
        'scope_key =',
      );
      expect(await indexConditions(`tenant_key = hashtextextended('t1'::text, 0) AND tenant = 't1'`)).toContain('tenant_key =');
      expect(await indexConditions(`hashtextextended(action_id, 0) = hashtextextended('act-3'::text, 0) AND action_id = 'act-3'`)).toContain(
        'hashtextextended(action_id',
      );
      // A tenant's total can read the index alone (bitmap scans off: on so few rows they cost less).
      await client.query('SET enable_bitmapscan = off');
      const count = await client.query(
        `EXPLAIN (FORMAT JSON) SELECT count(*) FROM ${schema}.audit_records WHERE scope_key = hashtextextended('ns-a'::text || '/' || 't1'::text, 0) AND dispatched_at >= '${new Date(BASE).toISOString()}'`,
      );
      expect(JSON.stringify(count.rows)).toContain('Index Only Scan');
    } finally {
      client.release();
    }
  });
});
