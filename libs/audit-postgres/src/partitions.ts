import type { Pool } from 'pg';
import { quoteSchema } from './sql-identifier.js';

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
        const { rows } = await client.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [`${s}.${name}`]);
        if (rows[0]?.present) continue;
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
