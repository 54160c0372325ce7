import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startPostgresServer, type RunningPostgres } from '../../../test/support/postgres-server.js';
import { dayStart, dropPartitionsBefore, ensurePartitions, migrate, MIGRATIONS, partitionName, SchemaTooNewError, schemaVersion } from '../src/index.js';

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

  it('drops partitions past the cutoff whole, except that held tenants keep their records', async () => {
    const s = freshSchema();
    await migrate(pool, s);
    const day0 = Date.UTC(2026, 10, 1);
    await ensurePartitions(pool, s, day0, 4);
    const insert = (dayIndex: number, tenant: string, n: number) =>
      pool.query(
        `INSERT INTO "${s}".audit_records (id, dispatched_at, action_id, namespace, tenant, provider, action_type, verdict, outcome, caller_id, body)
         SELECT gen_random_uuid(), $1::timestamptz + g * interval '1 second', 'a', 'ns', $2, 'email', 'send', 'allow', 'executed', 'anonymous', '{}'
         FROM generate_series(1, $3) AS g`,
        [new Date(day0 + dayIndex * DAY_MS).toISOString(), tenant, n],
      );
    await insert(0, 'free', 5); // day 0: nobody held
    await insert(1, 'free', 7); // day 1: a held tenant too
    await insert(1, 'held', 3);
    await insert(2, 'free', 4); // day 2 and 3: not past the cutoff
    await insert(3, 'held', 1);
    const result = await dropPartitionsBefore(pool, s, day0 + 2 * DAY_MS, [{ namespace: 'ns', tenant: 'held' }], 2);
    expect(result).toEqual({ dropped: [partitionName(day0)], kept: [partitionName(day0 + DAY_MS)], deletedRows: 7 });
    const { rows } = await pool.query(
      `SELECT tableoid::regclass::text AS part, tenant, count(*)::int AS n FROM "${s}".audit_records GROUP BY 1, 2 ORDER BY 1, 2`,
    );
    expect(rows).toEqual([
      { part: `${s}.${partitionName(day0 + DAY_MS)}`, tenant: 'held', n: 3 },
      { part: `${s}.${partitionName(day0 + 2 * DAY_MS)}`, tenant: 'free', n: 4 },
      { part: `${s}.${partitionName(day0 + 3 * DAY_MS)}`, tenant: 'held', n: 1 },
    ]);
    // Nobody held: everything past the cutoff goes, the kept partition too.
    expect(await dropPartitionsBefore(pool, s, day0 + 2 * DAY_MS, [])).toEqual({ dropped: [partitionName(day0 + DAY_MS)], kept: [], deletedRows: 0 });
  });
});
