import type { Pool } from 'pg';
import { MIGRATIONS, type Migration } from './migrations.js';
import { quoteSchema, relationExists } from './sql-identifier.js';
import { inTransaction } from './transaction.js';

export interface MigrateResult {
  /** Version found before this run (0: a new schema). */
  from: number;
  to: number;
  /** Versions this run applied; empty when another process had applied them, or none were missing. */
  applied: number[];
}

/** The database holds a schema version this code does not know: a newer release migrated it. */
export class SchemaTooNewError extends Error {
  constructor(
    readonly schema: string,
    readonly found: number,
    readonly known: number,
  ) {
    super(`audit schema "${schema}" is at version ${found}, newer than this release knows (${known}): run the release that migrated it, or newer`);
    this.name = 'SchemaTooNewError';
  }
}

/** Every process migrating one schema takes this session lock, so one applies each step and the others then find it done. */
const lockKey = (schema: string) => `sluice-audit-migrate:${schema}`;

/**
 * Applies the missing migrations to `schema` (created when absent), one transaction each, under
 * a PostgreSQL advisory lock held for the whole run: API replicas and workers starting together
 * wait for one another instead of racing. Refuses a schema newer than this code.
 */
export async function migrate(pool: Pool, schema: string, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrateResult> {
  const s = quoteSchema(schema);
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [lockKey(schema)]);
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const from = await currentVersion(client, s);
      const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
      if (from > known) throw new SchemaTooNewError(schema, from, known);
      const applied: number[] = [];
      for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
        if (m.version <= from) continue;
        await inTransaction(client, async () => {
          await client.query(m.sql(s));
          await client.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
        });
        applied.push(m.version);
      }
      return { from, to: Math.max(from, ...applied), applied };
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [lockKey(schema)]);
    }
  } finally {
    client.release();
  }
}

/**
 * For processes that read and write but do not migrate (API replicas): the schema's version and
 * the one this code knows; a newer schema is an error (SchemaTooNewError), an older one is for a
 * migrating process (a worker, `sluice migrate`) to bring up.
 */
export async function checkSchema(pool: Pool, schema: string, migrations: readonly Migration[] = MIGRATIONS): Promise<{ found: number; known: number }> {
  const found = await schemaVersion(pool, schema);
  const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  if (found > known) throw new SchemaTooNewError(schema, found, known);
  return { found, known };
}

/** The schema's version without changing anything (0 when it has none); for processes that only read and write. */
export async function schemaVersion(pool: Pool, schema: string): Promise<number> {
  const s = quoteSchema(schema);
  if (!(await relationExists(pool, `${s}.schema_migrations`))) return 0;
  return currentVersion(pool, s);
}

async function currentVersion(client: Pick<Pool, 'query'>, s: string): Promise<number> {
  const { rows } = await client.query<{ version: number | null }>(`SELECT max(version) AS version FROM ${s}.schema_migrations`);
  return rows[0]?.version ?? 0;
}
