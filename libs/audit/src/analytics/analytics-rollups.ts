import { errors, systemClock, type AnalyticsResult, type Clock } from '@sluice/core';
import type { BulkWriteOp, StateStore } from '@sluice/state';
import { aggregate } from './aggregate.js';
import { binOf } from './histogram.js';
import { planSegments } from './read-plan.js';
import { CellMemo } from './cell-memo.js';
import { cellNumber, granularityMs, rollupCell, sameTuple, tupleRef, type Granularity, type RollupCell, type Tuple } from './rollup-keys.js';
import { stateRollupSource, type RollupSource } from './rollup-reader.js';
import { DAY_MS, ceilHour, countBuckets, floorDay, floorHour } from './time-buckets.js';
import type { AnalyticsFilters, RollupQuery, RollupRecord } from './types.js';

export interface AnalyticsRollupsOptions {
  state: StateStore;
  /** Decides the TTLs (a rollup expires `retention` after its bucket ends) and what is still worth reading. */
  clock?: Clock;
  /** Life of the daily rollups (daily, weekly and monthly queries) after their day ends. Default 400. */
  retentionDays?: number;
  /**
   * Life of the hourly rollups, which take ~24x the keys of the daily ones. Default 35 (as the
   * config's `audit.analytics_hourly_retention_days`), capped at retentionDays.
   */
  hourlyRetentionDays?: number;
  /** Run before each query: indexes what the audit trail has queued (the audit store's catchUp). */
  beforeRead?: () => Promise<unknown>;
  /** Where queries read the rollups (default: the state store's counters, which writesFor feeds). */
  source?: RollupSource;
}

const DEFAULT_RETENTION_DAYS = 400;
const DEFAULT_HOURLY_RETENTION_DAYS = 35;

/** Most output buckets one query may produce (e.g. 10 000 hours ≈ 416 days). */
const MAX_ANALYTICS_BUCKETS = 10_000;
const DEFAULT_TOP_N = 10;
const GRANULARITIES: readonly Granularity[] = ['hour', 'day'];

/** How long rollups of each granularity live after their bucket ends, from the options' days (and their defaults). */
export function rollupRetentionMs(opts: Pick<AnalyticsRollupsOptions, 'retentionDays' | 'hourlyRetentionDays'>): Record<Granularity, number> {
  const days = opts.retentionDays ?? DEFAULT_RETENTION_DAYS;
  // Hours older than the daily rollups are never read (queries stop at the daily retention).
  const hours = Math.min(days, opts.hourlyRetentionDays ?? DEFAULT_HOURLY_RETENTION_DAYS);
  return { day: days * DAY_MS, hour: hours * DAY_MS };
}

function matches(f: AnalyticsFilters, t: Tuple): boolean {
  return (
    (f.namespace === undefined || f.namespace === t.namespace) &&
    (f.tenant === undefined || f.tenant === t.tenant) &&
    (f.provider === undefined || f.provider === t.provider) &&
    (f.action_type === undefined || f.action_type === t.action_type) &&
    (f.outcome === undefined || f.outcome === t.outcome)
  );
}

/**
 * Analytics from rollups kept at write time: each dispatch adds to an hourly and a daily bucket
 * (a counter per latency bin, a count and a duration sum per tuple, plus a global and a
 * per-tenant index of the (tuple, bin) pairs seen), so a query reads O(buckets x distinct
 * tuples) keys, never the records.
 */
export class AnalyticsRollups {
  private readonly state: StateStore;
  private readonly clock: Clock;
  private readonly beforeRead: () => Promise<unknown>;
  private readonly retentionMs: Record<Granularity, number>;
  private readonly source: RollupSource;
  private readonly cells: Record<Granularity, CellMemo<RollupCell>> = { hour: new CellMemo(), day: new CellMemo() };

  constructor(opts: AnalyticsRollupsOptions) {
    this.state = opts.state;
    this.clock = opts.clock ?? systemClock;
    this.beforeRead = opts.beforeRead ?? (() => Promise.resolve());
    this.retentionMs = rollupRetentionMs(opts);
    this.source = opts.source ?? stateRollupSource(this.state);
  }

  /** Adds one dispatch at once (the audit store's ingest applies writesFor in bulk instead). */
  async record(record: RollupRecord): Promise<void> {
    const ops = this.writesFor(record);
    if (ops.length > 0) await this.state.writeBatch(ops);
  }

  /** The up to 10 bulk writes of one dispatch. Buckets already past retention are skipped. */
  writesFor(record: RollupRecord): BulkWriteOp[] {
    const at = Date.parse(record.dispatched_at);
    if (Number.isNaN(at)) throw new TypeError(`analytics: invalid dispatched_at ${record.dispatched_at}`);
    const ref = tupleRef({
      namespace: record.namespace,
      tenant: record.tenant,
      provider: record.provider,
      action_type: record.action_type,
      outcome: record.outcome,
    });
    const bin = binOf(record.duration_ms);
    const micros = Math.max(0, Math.round(record.duration_ms * 1000));
    const now = this.clock.now();
    const ops: BulkWriteOp[] = [];
    for (const g of GRANULARITIES) {
      const start = g === 'hour' ? floorHour(at) : floorDay(at);
      // Set once, when a key is created: every key of the bucket expires `retention` after the bucket ends.
      const ttlMs = start + granularityMs(g) + this.retentionMs[g] - now;
      if (ttlMs <= 0) continue;
      const n = cellNumber(g, start, bin);
      let cell = this.cells[g].get(ref.hash, n);
      // The hash stands for the tuple; a cell of another tuple under it (a collision) is rebuilt.
      if (cell === undefined || !sameTuple(cell.tuple, ref.tuple)) cell = this.cells[g].set(ref.hash, n, rollupCell(g, start, ref, bin));
      const { member, score } = cell;
      ops.push(
        { op: 'increment', key: cell.bin, by: 1, ttlMs },
        { op: 'increment', key: cell.sum, by: micros, ttlMs },
        { op: 'increment', key: cell.count, by: 1, ttlMs },
        // After the counters: a crash in between leaves an uncounted action, not a dangling entry.
        { op: 'indexAdd', index: cell.index, member, score, ttlMs },
        { op: 'indexAdd', index: cell.tenantIndex, member, score, ttlMs },
      );
    }
    return ops;
  }

  /** 400 (BAD_REQUEST) when from is after to, or the range needs more than MAX_ANALYTICS_BUCKETS buckets. */
  async query(q: RollupQuery): Promise<AnalyticsResult> {
    if (!Number.isFinite(q.fromMs) || !Number.isFinite(q.toMs)) throw errors.badRequest('from and to must be valid timestamps');
    if (q.fromMs > q.toMs) throw errors.badRequest('from must not be after to');
    const startMs = floorHour(q.fromMs);
    const endMs = ceilHour(q.toMs);
    const buckets = countBuckets(q.interval, startMs, endMs, MAX_ANALYTICS_BUCKETS);
    if (buckets > MAX_ANALYTICS_BUCKETS) {
      throw errors.badRequest(`the range needs more than ${MAX_ANALYTICS_BUCKETS} ${q.interval} buckets; narrow it or use a longer interval`);
    }
    await this.beforeRead();
    const segments = planSegments({
      interval: q.interval,
      startMs,
      endMs,
      nowMs: this.clock.now(),
      hourRetentionMs: this.retentionMs.hour,
      dayRetentionMs: this.retentionMs.day,
    });
    const accept = (t: Tuple) => matches(q, t) && (q.visible === undefined || q.visible(t.namespace, t.tenant));
    const read = await this.source(segments, { accept, tenant: q.tenant, latency: q.metric === 'latency' });
    const groupBy = q.groupBy ?? (q.metric === 'outcome_breakdown' ? 'outcome' : undefined);
    const result = aggregate(read, q.metric, groupBy, q.topN ?? DEFAULT_TOP_N);
    return {
      metric: q.metric,
      interval: q.interval,
      from: new Date(q.fromMs).toISOString(),
      to: new Date(q.toMs).toISOString(),
      buckets: result.buckets,
      top_entries: result.topEntries,
      total_count: result.totalCount,
    };
  }
}
