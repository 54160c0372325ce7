import type { Pool } from 'pg';
import { quoteSchema, relationExists } from './sql-identifier.js';
import { inPoolTransaction } from './transaction.js';

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
export function ensurePartitions(pool: Pool, schema: string, fromMs: number, days: number): Promise<string[]> {
  const s = quoteSchema(schema);
  return inPoolTransaction(pool, async (client) => {
    const created: string[] = [];
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`sluice-audit-partitions:${schema}`]);
    for (let i = 0, day = dayStart(fromMs); i < days; i++, day += DAY_MS) {
      const name = partitionName(day);
      if (await relationExists(client, `${s}.${name}`)) continue;
      const from = new Date(day).toISOString();
      const to = new Date(day + DAY_MS).toISOString();
      await client.query(`CREATE TABLE ${s}.${name} PARTITION OF ${s}.audit_records FOR VALUES FROM ('${from}') TO ('${to}')`);
      await client.query(keyStatistics(s, name));
      created.push(name);
    }
    return created;
  });
}

/**
 * The statistics a partition needs for its hashed keys (schema version 3). A query matches a
 * key's hash and its columns together; without knowing that the hash follows from the columns,
 * the planner multiplies their selectivities, expects one row, and sorts a tenant's whole window
 * instead of reading its index newest first. Migration 3 applies it to the partitions it finds:
 * a change here is a new migration too.
 */
export function keyStatistics(quotedSchema: string, partition: string): string {
  return `CREATE STATISTICS IF NOT EXISTS ${quotedSchema}.${partition}_keys (dependencies) ON namespace, tenant, scope_key, tenant_key FROM ${quotedSchema}.${partition}`;
}

/** The partitions writers need: from yesterday (late records) to `aheadDays` after today. */
export function ensurePartitionsAhead(pool: Pool, schema: string, nowMs: number, aheadDays: number): Promise<string[]> {
  return ensurePartitions(pool, schema, nowMs - DAY_MS, aheadDays + 2);
}

/** The partitions a schema has, with the end of each one's day. */
async function listPartitions(pool: Pool, schema: string): Promise<{ name: string; endMs: number }[]> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE i.inhparent = $1::regclass AND n.nspname = $2 ORDER BY c.relname`,
    [`${quoteSchema(schema)}.audit_records`, schema],
  );
  const partitions: { name: string; endMs: number }[] = [];
  for (const { name } of rows) {
    const day = /^audit_records_p(\d{4})(\d{2})(\d{2})$/.exec(name);
    if (day !== null) partitions.push({ name, endMs: Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3])) + DAY_MS });
  }
  return partitions;
}

export interface PartitionDropResult {
  /** Partitions dropped whole. */
  dropped: string[];
  /** Their rows. */
  rows: number;
}

/** A drop waits this long for the table lock (queries running on the table), then gives up until the next sweep. */
const DROP_LOCK_TIMEOUT = '5s';

/**
 * Retention by the day: drops every partition whose day has ended and that holds no live row —
 * none with an expires_at after `nowMs`, none kept for good (NULL: compliance hold, immutable
 * audit). With the gateway-wide TTL that is every day older than the TTL, in one statement each;
 * a day holding a tenant with a longer TTL or a hold stays, and loses its due rows to the batched
 * deletes instead. The recheck runs under the table lock, so a row ingested meanwhile is kept.
 */
export async function dropExpiredPartitions(pool: Pool, schema: string, nowMs: number): Promise<PartitionDropResult> {
  const s = quoteSchema(schema);
  const now = new Date(nowMs).toISOString();
  const live = (name: string) => `SELECT 1 FROM ${s}.${name} WHERE expires_at IS NULL OR expires_at > $1 LIMIT 1`;
  const result: PartitionDropResult = { dropped: [], rows: 0 };
  for (const { name, endMs } of await listPartitions(pool, schema)) {
    if (endMs > nowMs || (await pool.query(live(name), [now])).rowCount !== 0) continue;
    const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${s}.${name}`);
    const dropped = await inPoolTransaction(pool, async (client) => {
      await client.query(`SET LOCAL lock_timeout = '${DROP_LOCK_TIMEOUT}'`);
      // The parent first, as inserts lock it before their partition: no deadlock with the ingest.
      await client.query(`LOCK TABLE ${s}.audit_records IN ACCESS EXCLUSIVE MODE`);
      if ((await client.query(live(name), [now])).rowCount !== 0) return { rollback: false };
      await client.query(`DROP TABLE ${s}.${name}`);
      return true;
    });
    if (!dropped) continue;
    result.dropped.push(name);
    result.rows += Number(rows[0]?.n ?? 0);
  }
  return result;
}

/**
 * The days a writer knows to have a partition, so a batch creates only what it lacks (a record
 * of a day nobody prepared: a clock far off, or a backlog older than the partitions kept).
 */
export class KnownPartitions {
  private readonly days = new Set<number>();

  constructor(
    private readonly pool: Pool,
    private readonly schema: string,
  ) {}

  /** Times that are not numbers (an id that is not a record id) are skipped: the insert refuses such a record. */
  async ensureFor(timesMs: Iterable<number>): Promise<void> {
    for (const day of new Set(Array.from(timesMs, dayStart))) {
      if (!Number.isFinite(day)) continue;
      if (this.days.has(day)) continue;
      await ensurePartitions(this.pool, this.schema, day, 1);
      this.days.add(day);
    }
  }

  /** After a write found a partition missing (retention dropped it): ask the database again. */
  forget(): void {
    this.days.clear();
  }
}
