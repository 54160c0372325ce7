import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { poll } from '../../../test/support/poll.js';
import { startPostgresServer, type RunningPostgres } from '../../../test/support/postgres-server.js';
import { dayStart, dropExpiredPartitions, ensurePartitions, migrate, MIGRATIONS, partitionName, SchemaTooNewError, schemaVersion } from '../src/index.js';

const DAY_MS = 86_400_000;

describe('PostgreSQL audit schema: migrations and partitions', () => {
  let server: RunningPostgres;
  let pool: pg.Pool;
  beforeAll(async () => {
    server = await startPostgresServer();
    pool = new pg.Pool({ connectionString: await server.createDatabase('migrations'), max: 6 });
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await server?.stop();
  });
  // Every test has a schema of its own in the suite's database.
  let schema = '';
  afterEach(async () => {
    if (schema) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
  const freshSchema = () => {
    schema = `t_${randomUUID().slice(0, 8)}`;
    return schema;
  };
  const latest = Math.max(...MIGRATIONS.map((m) => m.version));

  it('creates the schema and applies every step once; a second run applies nothing', async () => {
    const s = freshSchema();
    expect(await schemaVersion(pool, s)).toBe(0);
    expect(await migrate(pool, s)).toEqual({ from: 0, to: latest, applied: MIGRATIONS.map((m) => m.version) });
    expect(await migrate(pool, s)).toEqual({ from: latest, to: latest, applied: [] });
    expect(await schemaVersion(pool, s)).toBe(latest);
    const { rows } = await pool.query(`SELECT version FROM "${s}".schema_migrations ORDER BY version`);
    expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
    // The records table is partitioned by range of dispatched_at.
    const part = await pool.query(
      `SELECT p.partstrat FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'audit_records'`,
      [s],
    );
    expect(part.rows).toEqual([{ partstrat: 'r' }]);
  });

  it('lets migrators racing on one schema apply each step exactly once (advisory lock)', async () => {
    const s = freshSchema();
    const results = await Promise.all(Array.from({ length: 5 }, () => migrate(pool, s)));
    const applied = results.flatMap((r) => r.applied);
    expect(applied).toEqual(MIGRATIONS.map((m) => m.version));
    expect(results.every((r) => r.to === latest)).toBe(true);
  });

  it('refuses a schema newer than the code, and changes nothing', async () => {
    const s = freshSchema();
    await migrate(pool, s);
    await pool.query(`INSERT INTO "${s}".schema_migrations (version, name) VALUES ($1, 'from a newer release')`, [latest + 1]);
    const err = await migrate(pool, s).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaTooNewError);
    expect(err).toMatchObject({ schema: s, found: latest + 1, known: latest });
    expect(await schemaVersion(pool, s)).toBe(latest + 1);
  });

  it('rolls a failing step back whole and records nothing for it', async () => {
    const s = freshSchema();
    const broken = [
      ...MIGRATIONS,
      { version: latest + 1, name: 'broken', sql: (q: string) => `CREATE TABLE ${q}.half_done (x int); SELECT no_such_function();` },
    ];
    await expect(migrate(pool, s, broken)).rejects.toThrow(/no_such_function/);
    expect(await schemaVersion(pool, s)).toBe(latest);
    const { rows } = await pool.query('SELECT to_regclass($1) AS t', [`"${s}".half_done`]);
    expect(rows[0].t).toBeNull();
  });

  it('creates daily partitions ahead, idempotently and racing, and rows land in their day', async () => {
    const s = freshSchema();
    await migrate(pool, s);
    const now = Date.UTC(2026, 10, 26, 13, 45);
    const runs = await Promise.all([0, 1, 2].map(() => ensurePartitions(pool, s, now, 3)));
    const created = runs.flat().sort();
    expect(created).toEqual([0, 1, 2].map((d) => partitionName(dayStart(now) + d * DAY_MS)).sort());
    expect(created[0]).toBe('audit_records_p20261126');
    expect(await ensurePartitions(pool, s, now, 3)).toEqual([]);
    const insert = (at: number) =>
      pool.query(
        `INSERT INTO "${s}".audit_records (id, dispatched_at, action_id, namespace, tenant, provider, action_type, verdict, outcome, caller_id, body)
         VALUES ($1, $2, 'a', 'ns', 't', 'email', 'send', 'allow', 'executed', 'anonymous', '{}') RETURNING tableoid::regclass::text AS part`,
        [randomUUID(), new Date(at).toISOString()],
      );
    expect((await insert(now + DAY_MS)).rows[0].part).toBe(`${s}.audit_records_p20261127`);
    // No partition for that day yet: refused, never silently kept elsewhere.
    await expect(insert(now + 5 * DAY_MS)).rejects.toThrow(/no partition/);
  });

  it('drops a partition whose day has ended once it holds no live row, and keeps days with held or longer-lived rows', async () => {
    const s = freshSchema();
    await migrate(pool, s);
    const day0 = Date.UTC(2026, 10, 1);
    await ensurePartitions(pool, s, day0, 4);
    const now = day0 + 3 * DAY_MS + 3_600_000; // days 0-2 have ended
    const insert = (dayIndex: number, n: number, expiresAt: number | null) =>
      pool.query(
        `INSERT INTO "${s}".audit_records (id, dispatched_at, action_id, namespace, tenant, provider, action_type, verdict, outcome, caller_id, expires_at, body)
         SELECT gen_random_uuid(), $1::timestamptz + g * interval '1 second', 'a', 'ns', 't', 'email', 'send', 'allow', 'executed', 'anonymous', $2, '{}'
         FROM generate_series(1, $3) AS g`,
        [new Date(day0 + dayIndex * DAY_MS).toISOString(), expiresAt === null ? null : new Date(expiresAt).toISOString(), n],
      );
    await insert(0, 5, day0 + DAY_MS); // day 0: all due
    await insert(1, 7, day0 + 2 * DAY_MS); // day 1: due, and 2 kept for good (a hold)
    await insert(1, 2, null);
    await insert(2, 4, day0 + 2 * DAY_MS); // day 2: due, and 1 row of a tenant with a longer TTL
    await insert(2, 1, now + DAY_MS);
    await insert(3, 6, day0 + 2 * DAY_MS); // day 3: all due, but the day has not ended
    expect(await dropExpiredPartitions(pool, s, now)).toEqual({ dropped: [partitionName(day0)], rows: 5 });
    const { rows } = await pool.query(`SELECT tableoid::regclass::text AS part, count(*)::int AS n FROM "${s}".audit_records GROUP BY 1 ORDER BY 1`);
    expect(rows).toEqual([1, 2, 3].map((d, i) => ({ part: `${s}.${partitionName(day0 + d * DAY_MS)}`, n: [9, 5, 6][i] })));
    // Once the longer-lived row is due too, day 2 goes; day 1 never does (its held rows).
    expect(await dropExpiredPartitions(pool, s, now + 2 * DAY_MS)).toEqual({
      dropped: [partitionName(day0 + 2 * DAY_MS), partitionName(day0 + 3 * DAY_MS)],
      rows: 11,
    });
    expect(await dropExpiredPartitions(pool, s, now + 400 * DAY_MS)).toEqual({ dropped: [], rows: 0 });
  });

  it('keeps a day whose live row is being inserted while the drop checks it (the recheck under the table lock)', async () => {
    const s = freshSchema();
    await migrate(pool, s);
    const day0 = Date.UTC(2026, 9, 1);
    await ensurePartitions(pool, s, day0, 1);
    const now = day0 + 2 * DAY_MS;
    const row = (expiresAt: number) =>
      pool.query(
        `INSERT INTO "${s}".audit_records (id, dispatched_at, action_id, namespace, tenant, provider, action_type, verdict, outcome, caller_id, expires_at, body)
         VALUES (gen_random_uuid(), $1, 'a', 'ns', 't', 'email', 'send', 'allow', 'executed', 'anonymous', $2, '{}')`,
        [new Date(day0 + 1000).toISOString(), new Date(expiresAt).toISOString()],
      );
    await row(day0 + DAY_MS); // due: the day looks droppable
    // Another connection (as an ingest would) inserts a live row of that day in a transaction still open.
    const ingest = await pool.connect();
    try {
      await ingest.query('BEGIN');
      await ingest.query(
        `INSERT INTO "${s}".audit_records (id, dispatched_at, action_id, namespace, tenant, provider, action_type, verdict, outcome, caller_id, expires_at, body)
         VALUES (gen_random_uuid(), $1, 'late', 'ns', 't', 'email', 'send', 'allow', 'executed', 'anonymous', $2, '{}')`,
        [new Date(day0 + 2000).toISOString(), new Date(now + DAY_MS).toISOString()],
      );
      // The drop saw no live row, and now waits for the table lock the open insert holds.
      const dropping = dropExpiredPartitions(pool, s, now);
      await poll(
        'the drop to wait for the lock',
        async () =>
          (await pool.query(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = $1::regclass`, [`"${s}".audit_records`])).rows[0].n,
        (n) => n > 0,
      );
      await ingest.query('COMMIT');
      expect(await dropping).toEqual({ dropped: [], rows: 0 });
    } finally {
      ingest.release();
    }
    const { rows } = await pool.query(`SELECT action_id FROM "${s}".audit_records ORDER BY action_id`);
    expect(rows.map((r) => r.action_id)).toEqual(['a', 'late']);
  });
});
