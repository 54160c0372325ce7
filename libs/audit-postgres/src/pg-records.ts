import { decodeCursor, encodeCursor, type StoreQuery } from '@sluice/audit';
import { AuditFilterFields, compareCodeUnits, type AuditFilterField, type AuditPage, type AuditRecord } from '@sluice/core';
import type { Pool } from 'pg';
import { BodyCodec, type BodyCodecOptions } from './body-codec.js';
import { bodyJson, hashedKey, insertParameters, insertStatement, recordsOf, SELECT_LIST, type RecordRow } from './record-columns.js';
import { rollupTables, type RollupRetention } from './pg-rollups.js';
import { quoteSchema } from './sql-identifier.js';

/** A (namespace, tenant): one hash chain. */
type TenantScope = Pick<AuditRecord, 'namespace' | 'tenant'>;

/** Rows read per round trip while a `visible` predicate thins a page out. */
const MIN_BATCH = 50;
const MAX_BATCH = 1000;
/**
 * The trail's order, on the table's columns: SELECT_LIST names its text form of dispatched_at
 * `dispatched_at` too, and an unqualified ORDER BY would sort by that (every matching row, no index).
 */
const NEWEST_FIRST = 'ORDER BY audit_records.dispatched_at DESC, audit_records.id DESC';
/** A page's total is counted up to this many rows; above, it is left out. */
const DEFAULT_MAX_COUNTED = 100_000;
/** Rows one page may examine before it ends early with a cursor (as the state store's scan budget). */
const DEFAULT_SCAN_BUDGET = 20_000;

export interface PgAuditRecordsOptions {
  /** Rows one page may examine before it ends early with a cursor. */
  scanBudget?: number | undefined;
  /** A page's total is counted up to this many rows; above, it is left out. */
  maxCounted?: number;
  /** How bodies are compressed (body-codec.ts). */
  bodies?: BodyCodecOptions;
  /** Inserts add to the analytics and coverage rollup tables, which keep buckets this long (pg-rollups.ts); absent: records only. */
  rollups?: RollupRetention;
  now?: () => number;
}

/**
 * The audit_records table of one schema: batched idempotent inserts, lookups by action id and
 * pages of GET /v1/audit, newest first with cursors on (dispatched_at, id).
 */
export class PgAuditRecords {
  private readonly table: string;
  private readonly codec: BodyCodec;
  private readonly scanBudget: number;
  private readonly maxCounted: number;
  private readonly insertSql: string;
  private readonly rollups: RollupRetention | undefined;
  private readonly now: () => number;

  constructor(
    private readonly pool: Pool,
    schema: string,
    opts: PgAuditRecordsOptions = {},
  ) {
    this.table = `${quoteSchema(schema)}.audit_records`;
    this.codec = new BodyCodec(pool, quoteSchema(schema), opts.bodies);
    this.scanBudget = opts.scanBudget ?? DEFAULT_SCAN_BUDGET;
    this.maxCounted = opts.maxCounted ?? DEFAULT_MAX_COUNTED;
    this.rollups = opts.rollups;
    this.now = opts.now ?? Date.now;
    this.insertSql = insertStatement(this.table, opts.rollups === undefined ? undefined : rollupTables(quoteSchema(schema)));
  }

  /**
   * Inserts a batch of records in one statement, their bodies compressed (record-columns.ts). A
   * record already there (the same id and dispatched_at, delivered again after a crash) is
   * skipped. Rows go in by scope and time: a tenant's rows of the batch then sit side by side,
   * which lets PostgreSQL fill the pages of the (scope, time) indexes instead of splitting them
   * in half. Returns how many rows were new.
   */
  async insert(records: readonly AuditRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    const ordered = [...records].sort(byScopeAndTime);
    const encoded = await this.codec.encode(
      ordered.map((r) => ({ group: `${r.provider}\u0000${r.action_type}\u0000${r.outcome}`, body: Buffer.from(bodyJson(r)) })),
    );
    const rollups = this.rollups === undefined ? undefined : { retention: this.rollups, nowMs: this.now() };
    const { rows } = await this.pool.query<{ stored: number }>(this.insertSql, insertParameters(ordered, encoded, rollups));
    return rows[0]?.stored ?? 0;
  }

  /** Deletes up to `limit` rows due at `nowMs` (expires_at at or before it); returns how many. */
  async deleteDue(nowMs: number, limit: number): Promise<number> {
    const result = await this.pool.query(
      `DELETE FROM ${this.table} WHERE (dispatched_at, id) IN (SELECT dispatched_at, id FROM ${this.table} WHERE expires_at <= $1 LIMIT $2)`,
      [new Date(nowMs).toISOString(), limit],
    );
    return result.rowCount ?? 0;
  }

  /** The chained records of one scope with min ≤ sequence_number ≤ max (absent: unbounded), in sequence order. */
  async chainLinks(scope: TenantScope, bounds: { min?: number; max?: number }, limit: number): Promise<AuditRecord[]> {
    const params: unknown[] = [scope.namespace, scope.tenant];
    const where = ['namespace = $1', 'tenant = $2', 'sequence_number IS NOT NULL'];
    if (bounds.min !== undefined) where.push(`sequence_number >= $${params.push(bounds.min)}`);
    if (bounds.max !== undefined) where.push(`sequence_number <= $${params.push(bounds.max)}`);
    const { rows } = await this.pool.query<RecordRow>(
      `SELECT ${SELECT_LIST} FROM ${this.table} WHERE ${where.join(' AND ')} ORDER BY sequence_number LIMIT ${Math.max(1, Math.floor(limit))}`,
      params,
    );
    return recordsOf(rows, this.codec);
  }

  /** The sequence number of the first (or, `newest`, last) chained record of a scope dispatched within the window; null when none. */
  async chainEdge(scope: TenantScope, window: { fromMs?: number; toMs?: number }, newest: boolean): Promise<number | null> {
    const params: unknown[] = [scope.namespace, scope.tenant];
    const where = ['namespace = $1', 'tenant = $2', 'sequence_number IS NOT NULL'];
    if (window.fromMs !== undefined) where.push(`dispatched_at >= $${params.push(new Date(window.fromMs).toISOString())}`);
    if (window.toMs !== undefined) where.push(`dispatched_at <= $${params.push(new Date(window.toMs).toISOString())}`);
    const order = newest ? 'DESC' : 'ASC';
    const { rows } = await this.pool.query<{ s: string }>(
      `SELECT sequence_number AS s FROM ${this.table} WHERE ${where.join(' AND ')} ORDER BY dispatched_at ${order}, id ${order} LIMIT 1`,
      params,
    );
    return rows[0] === undefined ? null : Number(rows[0].s);
  }

  /** Records of one action id, newest first (ids are per tenant: several tenants may share one). */
  async byActionId(actionId: string, limit: number): Promise<AuditRecord[]> {
    const { rows } = await this.pool.query<RecordRow>(
      `SELECT ${SELECT_LIST} FROM ${this.table} WHERE ${hashedKey.action('$1')} AND action_id = $1 ${NEWEST_FIRST} LIMIT $2`,
      [actionId, limit],
    );
    return recordsOf(rows, this.codec);
  }

  /**
   * One page, newest first: every filter, the window, unexpired records only, `offset` skipped
   * (without a cursor), then `visible`. `total` is counted when there is no cursor and no
   * `visible` predicate, and when it is at most `maxCounted`; it includes expired records not
   * deleted yet.
   */
  async query(q: StoreQuery, nowMs: number): Promise<AuditPage> {
    const params: unknown[] = [];
    const bind = (value: unknown) => `$${params.push(value)}`;
    const bound: Partial<Record<AuditFilterField, string>> = {};
    for (const field of AuditFilterFields) if (q[field] !== undefined) bound[field] = bind(q[field]);
    // The hashed key standing for the scope (or the tenant), and the columns it covers.
    const key =
      bound.namespace !== undefined && bound.tenant !== undefined
        ? { sql: hashedKey.scope(bound.namespace, bound.tenant), covers: ['namespace', 'tenant'] }
        : bound.tenant !== undefined
          ? { sql: hashedKey.tenant(bound.tenant), covers: ['tenant'] }
          : null;
    const window: string[] = [];
    if (q.fromMs !== undefined) window.push(`dispatched_at >= ${bind(new Date(q.fromMs).toISOString())}`);
    if (q.toMs !== undefined) window.push(`dispatched_at <= ${bind(new Date(q.toMs).toISOString())}`);
    const equal = (field: AuditFilterField) => `${field} = ${bound[field]}`;
    const fields = AuditFilterFields.filter((field) => bound[field] !== undefined);
    const filters = [...fields.map(equal), ...(key ? [key.sql] : []), ...window];
    const filterParams = params.length;
    // Bound last, so that the count can leave it out.
    const filtered = [...filters, `(expires_at IS NULL OR expires_at > ${bind(new Date(nowMs).toISOString())})`].join(' AND ');
    const cursor = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
    const page: AuditPage = { records: [], limit: q.limit, offset: cursor === undefined ? q.offset : 0 };
    if (cursor === undefined && q.visible === undefined) {
      // Counted up to a bound: an exact total of millions of rows would cost more than the page.
      // Expired records not reaped yet are counted (as on the state trail), and the scope's (or
      // tenant's) hashed key stands for its columns, so that a tenant's total reads the index
      // alone, not every row.
      const countFilters = [...fields.filter((field) => !key?.covers.includes(field)).map(equal), ...(key ? [key.sql] : []), ...window];
      const { rows } = await this.pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM (SELECT 1 FROM ${this.table} WHERE ${countFilters.join(' AND ') || 'true'} LIMIT ${this.maxCounted + 1}) AS matching`,
        params.slice(0, filterParams),
      );
      const counted = Number(rows[0]?.n ?? 0);
      if (counted <= this.maxCounted) page.total = counted;
    }

    // Without `visible`, SQL pages exactly; with it, rows are read in batches and thinned here.
    let skip = cursor === undefined ? q.offset : (cursor.s ?? 0);
    const sqlOffset = q.visible === undefined ? skip : 0;
    if (sqlOffset > 0) skip = 0;
    const batch = q.visible === undefined ? q.limit + 1 : Math.min(MAX_BATCH, Math.max(MIN_BATCH, (q.limit + 1) * 4));
    let after = cursor === undefined ? null : { t: cursor.t, i: cursor.i };
    let scanned = 0;
    let full = false;
    let lastReturned: { t: number; i: string } | null = null;
    for (let first = true; !full && scanned < this.scanBudget; first = false) {
      // Strictly older than the last row seen: (dispatched_at, id) is the order, so ties page correctly.
      // Written out rather than as a row comparison, so that dispatched_at bounds the index scans
      // and prunes the partitions after the cursor.
      const t = `$${params.length + 1}::timestamptz`;
      const bounded = after === null ? '' : ` AND dispatched_at <= ${t} AND (dispatched_at < ${t} OR id < $${params.length + 2}::uuid)`;
      const { rows } = await this.pool.query<RecordRow>(
        `SELECT ${SELECT_LIST} FROM ${this.table} WHERE ${filtered}${bounded} ${NEWEST_FIRST} LIMIT ${batch}${first && sqlOffset > 0 ? ` OFFSET ${sqlOffset}` : ''}`,
        after === null ? params : [...params, new Date(after.t).toISOString(), after.i],
      );
      scanned += rows.length;
      for (const record of await recordsOf(rows, this.codec)) {
        after = { t: Date.parse(record.dispatched_at), i: record.id };
        if (!(q.visible?.(record) ?? true)) continue;
        if (skip > 0) skip--;
        else if (page.records.length === q.limit) {
          full = true; // one match beyond the page: there is a next page
          break;
        } else {
          page.records.push(record);
          lastReturned = { t: Date.parse(record.dispatched_at), i: record.id };
        }
      }
      if (rows.length < batch) break; // the table is exhausted
    }
    const next = full ? lastReturned : scanned >= this.scanBudget ? after : null;
    if (next !== null) page.next_cursor = encodeCursor(!full && skip > 0 ? { ...next, s: skip } : next);
    return page;
  }
}

/** Scope, then time, then id: the order of a batch's rows in the table. */
function byScopeAndTime(a: AuditRecord, b: AuditRecord): number {
  return (
    compareCodeUnits(a.namespace, b.namespace) ||
    compareCodeUnits(a.tenant, b.tenant) ||
    compareCodeUnits(a.dispatched_at, b.dispatched_at) ||
    compareCodeUnits(a.id, b.id)
  );
}
