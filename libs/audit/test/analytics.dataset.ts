import type { AnalyticsBucket, AnalyticsResult, AnalyticsTopEntry } from '@sluice/core';
import { LATENCY_BOUNDS_MS, type RollupQuery, type RollupRecord } from '../src/analytics/index.js';
import { prng } from '../../../test/support/prng.js';

/*
 * A deterministic data set and a brute-force analytics over it. The brute force shares no code
 * with the rollups except the histogram's bound table: bucket alignment, range rounding, binning
 * and percentiles are written out again here, record by record.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Tuesday 2026-02-24: ten days cross a month end and two ISO week starts. */
export const ANCHOR = Date.UTC(2026, 1, 24);
const DAYS = 10;
export const END = ANCHOR + DAYS * DAY;

const TENANTS = ['acme', 'acme.eu', 'acme.us', 'globex', 'initech'] as const;
const NAMESPACES = ['prod', 'staging', 'dev'] as const;
const PROVIDERS = ['email', 'sms', 'webhook', 'slack'] as const;
const ACTION_TYPES: readonly [string, number][] = [
  ['send', 30],
  ['notify', 22],
  ['alert', 15],
  ['sync', 12],
  ['digest', 10],
  ['page', 7],
  ['escalate', 4],
];
const OUTCOMES: readonly [string, number][] = [
  ['executed', 60],
  ['failed', 12],
  ['suppressed', 10],
  ['deduplicated', 8],
  ['throttled', 6],
  ['rerouted', 4],
];
/** Durations on and around bin bounds, zero, and one past the last bound. */
const EDGE_DURATIONS = [0, 0.25, 0.2501, 1, 1.19, 2, 100, 108, 16_800_000, 1e8];

export function generateRecords(count: number, seed = 42): RollupRecord[] {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const weighted = (xs: readonly [string, number][]): string => {
    const total = xs.reduce((s, [, w]) => s + w, 0);
    let r = rand() * total;
    for (const [x, w] of xs) {
      r -= w;
      if (r < 0) return x;
    }
    return xs[0]?.[0] ?? '';
  };
  const records: RollupRecord[] = [];
  for (let i = 0; i < count; i++) {
    let at = ANCHOR + Math.floor(rand() * DAYS * DAY);
    if (rand() < 0.02) at -= at % HOUR; // exactly on an hour boundary
    const duration = rand() < 0.05 ? pick(EDGE_DURATIONS) : Math.round(10 ** (rand() * 5.8 - 1.3) * 1000) / 1000; // 0.05 ms .. 30 s
    records.push({
      namespace: pick(NAMESPACES),
      tenant: pick(TENANTS),
      provider: pick(PROVIDERS),
      action_type: weighted(ACTION_TYPES),
      outcome: weighted(OUTCOMES),
      dispatched_at: new Date(at).toISOString(),
      duration_ms: duration,
    });
  }
  return records;
}

function bucketOf(interval: RollupQuery['interval'], ms: number): number {
  const d = new Date(ms);
  const [y, m, day, h] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours()];
  switch (interval) {
    case 'hourly':
      return Date.UTC(y, m, day, h);
    case 'daily':
      return Date.UTC(y, m, day);
    case 'weekly':
      return Date.UTC(y, m, day - ((d.getUTCDay() + 6) % 7));
    case 'monthly':
      return Date.UTC(y, m, 1);
  }
}

/** The histogram-bound rule, by linear scan: the first bound >= d, else the last bound. */
export function boundOf(durationMs: number): number {
  return LATENCY_BOUNDS_MS.find((b) => durationMs <= b) ?? (LATENCY_BOUNDS_MS.at(-1) as number);
}

function nearestRank(sortedBounds: number[], p: number): number {
  const rank = Math.max(1, Math.ceil((p * sortedBounds.length) / 100));
  return sortedBounds[rank - 1] as number;
}

interface Acc {
  bucket: number;
  group: string | undefined;
  records: RollupRecord[];
}

/** The answer computed from every record (range widened to whole hours, end exclusive). */
export function bruteForce(records: readonly RollupRecord[], q: RollupQuery): AnalyticsResult {
  const start = Math.floor(q.fromMs / HOUR) * HOUR;
  const end = Math.ceil(q.toMs / HOUR) * HOUR;
  const groupBy = q.groupBy ?? (q.metric === 'outcome_breakdown' ? 'outcome' : undefined);
  const keep = records.filter((r) => {
    const at = Date.parse(r.dispatched_at);
    return (
      at >= start &&
      at < end &&
      (q.namespace === undefined || r.namespace === q.namespace) &&
      (q.tenant === undefined || r.tenant === q.tenant) &&
      (q.provider === undefined || r.provider === q.provider) &&
      (q.action_type === undefined || r.action_type === q.action_type) &&
      (q.outcome === undefined || r.outcome === q.outcome) &&
      (q.visible === undefined || q.visible(r.namespace, r.tenant))
    );
  });
  const accs = new Map<string, Acc>();
  for (const r of keep) {
    const bucket = bucketOf(q.interval, Date.parse(r.dispatched_at));
    const group = groupBy === undefined ? undefined : r[groupBy];
    const id = `${bucket}|${group ?? ''}`;
    const acc = accs.get(id) ?? { bucket, group, records: [] };
    acc.records.push(r);
    accs.set(id, acc);
  }
  const buckets: AnalyticsBucket[] = [...accs.values()]
    .sort((a, b) => a.bucket - b.bucket || ((a.group ?? '') < (b.group ?? '') ? -1 : (a.group ?? '') > (b.group ?? '') ? 1 : 0))
    .map(({ bucket, group, records: rs }) => {
      const out: AnalyticsBucket = {
        timestamp: new Date(bucket).toISOString(),
        count: rs.length,
        group: group ?? null,
        avg_duration_ms: null,
        error_rate: null,
      };
      if (q.metric === 'error_rate') out.error_rate = rs.filter((r) => r.outcome === 'failed').length / rs.length;
      if (q.metric === 'latency') {
        const micros = rs.reduce((s, r) => s + Math.max(0, Math.round(r.duration_ms * 1000)), 0);
        const bounds = rs.map((r) => boundOf(r.duration_ms)).sort((a, b) => a - b);
        out.avg_duration_ms = micros / 1000 / rs.length;
        out.p50_duration_ms = nearestRank(bounds, 50);
        out.p95_duration_ms = nearestRank(bounds, 95);
        out.p99_duration_ms = nearestRank(bounds, 99);
      }
      return out;
    });
  const result: AnalyticsResult = {
    metric: q.metric,
    interval: q.interval,
    from: new Date(q.fromMs).toISOString(),
    to: new Date(q.toMs).toISOString(),
    buckets,
    top_entries: q.metric === 'top_action_types' && keep.length > 0 ? topEntries(keep, q.topN ?? 10) : [],
    total_count: keep.length,
  };
  return result;
}

function topEntries(keep: RollupRecord[], topN: number): AnalyticsTopEntry[] {
  const counts = new Map<string, number>();
  for (const r of keep) counts.set(r.action_type, (counts.get(r.action_type) ?? 0) + 1);
  return [...counts]
    .sort(([la, ca], [lb, cb]) => cb - ca || (la < lb ? -1 : 1))
    .slice(0, topN)
    .map(([label, count]) => ({ label, count, percentage: (count / keep.length) * 100 }));
}
