import type { Pool } from 'pg';
import { quoteSchema, relationExists } from './sql-identifier.js';

const DAY_MS = 86_400_000;

/** The partition of one UTC day: `audit_records_pYYYYMMDD`. */
export function partitionName(dayStartMs: number): string {
  return `audit_records_p${new Date(dayStartMs).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/** Midnight UTC of the day holding `ms`. */
export function dayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/**
 * Creates the daily partitions of `days` days from the one holding `fromMs` (those that exist are
 * left alone). Processes doing this at once serialize on a transaction-scoped advisory lock, so
 * none of them fails on a partition another has just created. Returns the names it created.
 */
export async function ensurePartitions(pool: Pool, schema: string, fromMs: number, days: number): Promise<string[]> {
  const s = quoteSchema(schema);
  const client = await pool.connect();
  const created: string[] = [];
  try {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`sluice-audit-partitions:${schema}`]);
      for (let i = 0, day = dayStart(fromMs); i < days; i++, day += DAY_MS) {
        const name = partitionName(day);
        if (await relationExists(client, `${s}.${name}`)) continue;
        const from = new Date(day).toISOString();
        const to = new Date(day + DAY_MS).toISOString();
        await client.query(`CREATE TABLE ${s}.${name} PARTITION OF ${s}.audit_records FOR VALUES FROM ('${from}') TO ('${to}')`);
        created.push(name);
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    }
  } finally {
    client.release();
  }
  return created;
}

/** The partitions writers need: from yesterday (late records) to `aheadDays` after today. */
export function ensurePartitionsAhead(pool: Pool, schema: string, nowMs: number, aheadDays: number): Promise<string[]> {
  return ensurePartitions(pool, schema, nowMs - DAY_MS, aheadDays + 2);
}

/** A (namespace, tenant) whose records are under compliance hold: never deleted by retention. */
export interface HeldScope {
  namespace: string;
  tenant: string;
}

export interface PartitionDropResult {
  /** Partitions dropped whole. */
  dropped: string[];
  /** Partitions past the cutoff kept because they hold held records (their other rows deleted). */
  kept: string[];
  /** Rows deleted from the kept partitions. */
  deletedRows: number;
}

/**
 * The gateway-wide TTL: every daily partition that ends at or before `cutoffMs` is dropped whole,
 * unless it holds records of a held scope; such a partition keeps those records and loses the
 * rest, in batches of `batchRows`.
 */
export async function dropPartitionsBefore(
  pool: Pool,
  schema: string,
  cutoffMs: number,
  held: readonly HeldScope[],
  batchRows = 10_000,
): Promise<PartitionDropResult> {
  const s = quoteSchema(schema);
  const { rows } = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE i.inhparent = $1::regclass AND n.nspname = $2 ORDER BY c.relname`,
    [`${s}.audit_records`, schema],
  );
  const result: PartitionDropResult = { dropped: [], kept: [], deletedRows: 0 };
  const heldNs = held.map((h) => h.namespace);
  const heldTenants = held.map((h) => h.tenant);
  for (const { name } of rows) {
    const day = /^audit_records_p(\d{4})(\d{2})(\d{2})$/.exec(name);
    if (day === null) continue;
    const endMs = Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3])) + DAY_MS;
    if (endMs > cutoffMs) continue;
    const isHeld = `(namespace, tenant) IN (SELECT * FROM unnest($1::text[], $2::text[]))`;
    const holds = held.length > 0 && (await pool.query(`SELECT 1 FROM ${s}.${name} WHERE ${isHeld} LIMIT 1`, [heldNs, heldTenants])).rowCount !== 0;
    if (!holds) {
      await pool.query(`DROP TABLE ${s}.${name}`);
      result.dropped.push(name);
      continue;
    }
    result.kept.push(name);
    for (;;) {
      const deleted = await pool.query(
        `DELETE FROM ${s}.${name} WHERE ctid IN (SELECT ctid FROM ${s}.${name} WHERE NOT ${isHeld} LIMIT ${Math.max(1, Math.floor(batchRows))})`,
        [heldNs, heldTenants],
      );
      result.deletedRows += deleted.rowCount ?? 0;
      if ((deleted.rowCount ?? 0) === 0) break;
    }
  }
  return result;
}
