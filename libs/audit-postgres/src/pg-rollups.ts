import {
  analyticsTupleRef,
  type AnalyticsTuple,
  type AnalyticsTupleRef,
  type CellCount,
  type CoverageSource,
  type CoverageTuple,
  type RollupRead,
  type RollupSource,
  type Segment,
  type TupleSum,
} from '@sluice/audit';
import type { Pool } from 'pg';

/**
 * The analytics and coverage rollups of the PostgreSQL trail (schema version 4): tables the
 * ingest adds to in the statement that inserts the records (record-columns.ts), read back in the
 * shape the state store's rollups are read in (RollupRead, coverage tuple counts), so queries,
 * grants and aggregation are the same code on every backend.
 */

/**
 * How long rollup rows live after their bucket ends, as the state store's TTLs would keep them
 * (rollupRetentionMs): hourly ones `hour` ms, daily ones and coverage days `day` ms.
 */
export interface RollupRetention {
  hour: number;
  day: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The rollup tables of a (quoted) schema. */
export function rollupTables(quotedSchema: string): { analytics: string; coverage: string } {
  return { analytics: `${quotedSchema}.audit_rollups`, coverage: `${quotedSchema}.audit_coverage` };
}

/**
 * The statements that add the rows of `fresh` (a CTE of the rows new to audit_records, with
 * their latency `bin` and `micros`) to the rollups, as CTEs; `$h` and `$d` are the parameters
 * holding the hour and day starts at or before which a bucket is past retention (cutoffs()). Each
 * groups first (one row per key, as ON CONFLICT DO UPDATE requires) and writes in key order, so
 * that two workers adding to the same keys lock them in the same order (no deadlock).
 */
export function rollupCtes(tables: { analytics: string; coverage: string }, params: { h: number; d: number }): string {
  const tuple = 'tenant, namespace, provider, action_type, outcome, bin';
  const analytics = (name: string, granularity: 'h' | 'd', unit: 'hour' | 'day', cutoff: number) => `
    ${name} AS (
      INSERT INTO ${tables.analytics} AS r (granularity, bucket, ${tuple}, actions, micros)
      SELECT '${granularity}', date_trunc('${unit}', dispatched_at, 'UTC') AS bucket, ${tuple}, count(*), sum(micros) FROM fresh
      GROUP BY bucket, ${tuple} HAVING date_trunc('${unit}', dispatched_at, 'UTC') > $${cutoff}
      ORDER BY bucket, ${tuple}
      ON CONFLICT (granularity, bucket, ${tuple}) DO UPDATE SET actions = r.actions + excluded.actions, micros = r.micros + excluded.micros
    )`;
  const covered = 'tenant, namespace, provider, action_type, rule';
  return `${analytics('hourly', 'h', 'hour', params.h)},${analytics('daily', 'd', 'day', params.d)},
    covered AS (
      INSERT INTO ${tables.coverage} AS c (day, tenant, namespace, provider, action_type, matched_rule, actions)
      SELECT date_trunc('day', dispatched_at, 'UTC') AS day, ${covered}, count(*) FROM (SELECT *, coalesce(matched_rule, '') AS rule FROM fresh) AS f
      GROUP BY day, ${covered} HAVING date_trunc('day', dispatched_at, 'UTC') > $${params.d}
      ORDER BY day, ${covered}
      ON CONFLICT (day, tenant, namespace, provider, action_type, matched_rule) DO UPDATE SET actions = c.actions + excluded.actions
    )`;
}

/** The values of rollupCtes' cutoff parameters at `nowMs`: a bucket at or before one has expired. */
export function cutoffs(retention: RollupRetention, nowMs: number): [string, string] {
  const at = (ms: number) => new Date(ms).toISOString();
  return [at(nowMs - retention.hour - HOUR_MS), at(nowMs - retention.day - DAY_MS)];
}

/** Deletes up to `limit` rows of each rollup table whose bucket has expired at `nowMs`; returns the larger of the two counts. */
export async function deleteExpiredRollups(
  pool: Pool,
  tables: { analytics: string; coverage: string },
  retention: RollupRetention,
  nowMs: number,
  limit: number,
): Promise<number> {
  const [h, d] = cutoffs(retention, nowMs);
  const analytics = await pool.query(
    `DELETE FROM ${tables.analytics} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${tables.analytics} WHERE (granularity = 'h' AND bucket <= $1) OR (granularity = 'd' AND bucket <= $2) LIMIT $3))`,
    [h, d, limit],
  );
  const coverage = await pool.query(`DELETE FROM ${tables.coverage} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${tables.coverage} WHERE day <= $1 LIMIT $2))`, [
    d,
    limit,
  ]);
  return Math.max(analytics.rowCount ?? 0, coverage.rowCount ?? 0);
}

interface AnalyticsRow extends AnalyticsTuple {
  granularity: string;
  start_ms: number;
  bin: number;
  actions: string;
  micros: string;
}

/**
 * The analytics rollups of the segments, from the table: counts per tuple (bins summed by
 * PostgreSQL), or for latency every bin's count and the duration sums. A tenant the query names
 * narrows the read; every other filter and the grants are the caller's `accept`.
 */
export function pgRollupSource(pool: Pool, table: string): RollupSource {
  return async (segments, opts) => {
    const read: RollupRead = { counts: [], cells: [], sums: [] };
    if (segments.length === 0) return read;
    const bySegment = new Map(segments.map((s) => [`${s.granularity === 'hour' ? 'h' : 'd'}${s.startMs}`, s]));
    const params: unknown[] = [segments.map((s) => (s.granularity === 'hour' ? 'h' : 'd')), segments.map((s) => new Date(s.startMs).toISOString())];
    const tenant = opts.tenant === undefined ? '' : `AND r.tenant = $${params.push(opts.tenant)}`;
    const tuple = 'r.namespace, r.tenant, r.provider, r.action_type, r.outcome';
    const cells = opts.latency ? 'r.bin, r.actions, r.micros' : '0 AS bin, sum(r.actions) AS actions, sum(r.micros) AS micros';
    const { rows } = await pool.query<AnalyticsRow>(
      `SELECT r.granularity, (extract(epoch FROM r.bucket) * 1000)::float8 AS start_ms, ${tuple}, ${cells}
       FROM ${table} r JOIN unnest($1::"char"[], $2::timestamptz[]) AS s(g, b) ON r.granularity = s.g AND r.bucket = s.b ${tenant}
       ${opts.latency ? '' : `GROUP BY r.granularity, r.bucket, ${tuple}`}`,
      params,
    );
    const refOf = tupleRefs(opts.accept);
    /** Per segment and tuple: its actions and the sum of their durations. */
    const totals = new Map<Segment, Map<AnalyticsTupleRef, { count: number; micros: number }>>();
    for (const row of rows) {
      const segment = bySegment.get(`${row.granularity}${row.start_ms}`);
      const ref = refOf(row);
      const count = Number(row.actions);
      if (segment === undefined || ref === null || count <= 0) continue;
      if (opts.latency) read.cells.push({ segment, ref, bin: row.bin, count } satisfies CellCount);
      const bySegmentTotals = totals.get(segment) ?? new Map<AnalyticsTupleRef, { count: number; micros: number }>();
      const total = bySegmentTotals.get(ref) ?? { count: 0, micros: 0 };
      total.count += count;
      total.micros += Number(row.micros);
      bySegmentTotals.set(ref, total);
      totals.set(segment, bySegmentTotals);
    }
    for (const [segment, byRef] of totals) {
      for (const [ref, { count, micros }] of byRef) {
        read.counts.push({ segment, ref, count });
        if (opts.latency) read.sums.push({ segment, ref, micros } satisfies TupleSum);
      }
    }
    return read;
  };
}

interface CoverageRow extends CoverageTuple {
  actions: string;
}

/** The coverage counts of the days, from the table, summed over the days per tuple (the report sums them anyway). */
export function pgCoverageSource(pool: Pool, table: string): CoverageSource {
  return async (days, accept, tenant) => {
    if (days.length === 0) return [];
    const params: unknown[] = [days.map((day) => new Date(day).toISOString())];
    const byTenant = tenant === undefined ? '' : `AND tenant = $${params.push(tenant)}`;
    const { rows } = await pool.query<CoverageRow>(
      `SELECT namespace, tenant, provider, action_type, nullif(matched_rule, '') AS matched_rule, sum(actions) AS actions
       FROM ${table} WHERE day = ANY($1::timestamptz[]) ${byTenant} GROUP BY namespace, tenant, provider, action_type, matched_rule`,
      params,
    );
    return rows.map(({ actions, ...tuple }) => ({ tuple, count: Number(actions) })).filter(({ tuple, count }) => count > 0 && accept(tuple));
  };
}

/** The reference of a row's tuple, each tuple judged by `accept` and referenced once per read; null when not accepted. */
function tupleRefs(accept: (tuple: AnalyticsTuple) => boolean): (row: AnalyticsTuple) => AnalyticsTupleRef | null {
  const seen = new Map<string, AnalyticsTupleRef | null>();
  return (row) => {
    const key = `${row.namespace}\u0000${row.tenant}\u0000${row.provider}\u0000${row.action_type}\u0000${row.outcome}`;
    let ref = seen.get(key);
    if (ref === undefined) {
      const tuple = { namespace: row.namespace, tenant: row.tenant, provider: row.provider, action_type: row.action_type, outcome: row.outcome };
      ref = accept(tuple) ? analyticsTupleRef(tuple) : null;
      seen.set(key, ref);
    }
    return ref;
  };
}
