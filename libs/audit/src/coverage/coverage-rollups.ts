import { errors, systemClock, type Clock } from '@sluice/core';
import type { BulkWriteOp, StateStore } from '@sluice/state';
import { DAY_MS, floorDay } from '../analytics/time-buckets.js';
import { CellMemo } from '../analytics/cell-memo.js';
import { coverageCell, sameTuple, tupleRef, type CoverageCell } from './coverage-keys.js';
import { foldEntries } from './coverage-fold.js';
import { stateCoverageSource, type CoverageSource } from './coverage-reader.js';
import type { CoverageRecord, CoverageRollupQuery, CoverageRollupResult } from './types.js';

export interface CoverageRollupsOptions {
  state: StateStore;
  /** Decides the TTLs (a day's rollup expires `retentionDays` after the day ends) and which days can hold data. */
  clock?: Clock;
  /** Default 400, as the analytics rollups. */
  retentionDays?: number;
  /** Run before each query: indexes what the audit trail has queued (the audit store's catchUp). */
  beforeRead?: () => Promise<unknown>;
  /** Where queries read the counters (default: the state store's, which writesFor feeds). */
  source?: CoverageSource;
}

/** Longest range one query may span. */
const MAX_COVERAGE_DAYS = 400;

function ceilDay(ms: number): number {
  const floor = floorDay(ms);
  return floor === ms ? ms : floor + DAY_MS;
}

/**
 * Rule coverage from rollups kept at write time: each dispatch increments the daily counter of
 * its (namespace, tenant, provider, action_type, matched rule or none) tuple and lists the tuple
 * in the day's index, so a query reads O(days x distinct tuples) keys, never the records.
 */
export class CoverageRollups {
  private readonly state: StateStore;
  private readonly clock: Clock;
  private readonly beforeRead: () => Promise<unknown>;
  private readonly retentionMs: number;
  private readonly source: CoverageSource;
  private readonly cells = new CellMemo<CoverageCell>();

  constructor(opts: CoverageRollupsOptions) {
    this.state = opts.state;
    this.clock = opts.clock ?? systemClock;
    this.beforeRead = opts.beforeRead ?? (() => Promise.resolve());
    this.retentionMs = (opts.retentionDays ?? 400) * DAY_MS;
    this.source = opts.source ?? stateCoverageSource(this.state);
  }

  /** Adds one dispatch at once (the audit store's ingest applies writesFor in bulk instead). */
  async record(record: CoverageRecord): Promise<void> {
    const ops = this.writesFor(record);
    if (ops.length > 0) await this.state.writeBatch(ops);
  }

  /** The 3 bulk writes of one dispatch; none when its day is already past retention. */
  writesFor(record: CoverageRecord): BulkWriteOp[] {
    const at = Date.parse(record.dispatched_at);
    if (Number.isNaN(at)) throw new TypeError(`coverage: invalid dispatched_at ${record.dispatched_at}`);
    const day = floorDay(at);
    // Set once, when a key is created: every key of the day expires `retention` after it ends.
    const ttlMs = day + DAY_MS + this.retentionMs - this.clock.now();
    if (ttlMs <= 0) return [];
    const { namespace, tenant, provider, action_type, matched_rule } = record;
    const ref = tupleRef({ namespace, tenant, provider, action_type, matched_rule });
    const n = day / DAY_MS;
    let cell = this.cells.get(ref.hash, n);
    // The hash stands for the tuple; a cell of another tuple under it (a collision) is rebuilt.
    if (cell === undefined || !sameTuple(cell.tuple, ref.tuple)) cell = this.cells.set(ref.hash, n, coverageCell(day, ref));
    const { member, score } = cell;
    return [
      { op: 'increment', key: cell.counter, by: 1, ttlMs },
      // After the counter: a crash in between leaves an uncounted action, not a dangling entry.
      { op: 'indexAdd', index: cell.index, member, score, ttlMs },
      { op: 'indexAdd', index: cell.tenantIndex, member, score, ttlMs },
    ];
  }

  /** 400 (BAD_REQUEST) when from is after to, or the range spans more than MAX_COVERAGE_DAYS days. */
  async query(q: CoverageRollupQuery): Promise<CoverageRollupResult> {
    if (!Number.isFinite(q.fromMs) || !Number.isFinite(q.toMs)) throw errors.badRequest('from and to must be valid timestamps');
    if (q.fromMs > q.toMs) throw errors.badRequest('from must not be after to');
    if (q.toMs - q.fromMs > MAX_COVERAGE_DAYS * DAY_MS) throw errors.badRequest(`the range exceeds ${MAX_COVERAGE_DAYS} days; narrow it`);
    const scannedFromMs = floorDay(q.fromMs);
    const scannedToMs = ceilDay(q.toMs);
    // Days past retention or more than a day ahead of now hold nothing: not read.
    const now = this.clock.now();
    const first = Math.max(scannedFromMs, floorDay(now - this.retentionMs) - DAY_MS);
    const end = Math.min(scannedToMs, floorDay(now) + 2 * DAY_MS);
    const days: number[] = [];
    for (let day = first; day < end; day += DAY_MS) days.push(day);
    const accept = (t: { namespace: string; tenant: string }) =>
      (q.namespace === undefined || q.namespace === t.namespace) &&
      (q.tenant === undefined || q.tenant === t.tenant) &&
      (q.visible === undefined || q.visible(t.namespace, t.tenant));
    await this.beforeRead();
    const counts = await this.source(days, accept, q.tenant);
    return { scannedFromMs, scannedToMs, entries: foldEntries(counts) };
  }
}
