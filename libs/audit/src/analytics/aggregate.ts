import { compareCodeUnits, type AnalyticsBucket, type AnalyticsDimension, type AnalyticsMetric, type AnalyticsTopEntry } from '@sluice/core';
import { addBins, percentile, type BinCounts } from './histogram.js';
import type { Tuple } from './rollup-keys.js';
import type { RollupRead } from './rollup-reader.js';

/** The outcome error_rate counts. */
const FAILED_OUTCOME = 'failed';

interface Accumulator {
  bucketMs: number;
  group: string | null;
  count: number;
  failed: number;
  micros: number;
  bins: BinCounts;
}

export interface Aggregated {
  buckets: AnalyticsBucket[];
  topEntries: AnalyticsTopEntry[];
  totalCount: number;
}

/** Bucket fields a metric fills: the spec's others stay null. */
function fields(metric: AnalyticsMetric, acc: Accumulator): Partial<AnalyticsBucket> {
  if (metric === 'error_rate') return { error_rate: acc.failed / acc.count };
  if (metric !== 'latency') return {};
  const p = (q: number) => percentile(acc.bins, acc.count, q) ?? 0;
  return { avg_duration_ms: acc.micros / 1000 / acc.count, p50_duration_ms: p(50), p95_duration_ms: p(95), p99_duration_ms: p(99) };
}

/** Top action types by count (ties: label order), with their share of the total. */
function topActionTypes(tuples: RollupRead['counts'], total: number, topN: number): AnalyticsTopEntry[] {
  const counts = new Map<string, number>();
  for (const { ref, count } of tuples) counts.set(ref.tuple.action_type, (counts.get(ref.tuple.action_type) ?? 0) + count);
  return [...counts]
    .sort(([la, ca], [lb, cb]) => cb - ca || compareCodeUnits(la, lb))
    .slice(0, topN)
    .map(([label, count]) => ({ label, count, percentage: total > 0 ? (count / total) * 100 : 0 }));
}

/** Folds the rollup cells into output buckets (one per bucket start and group value). */
export function aggregate(read: RollupRead, metric: AnalyticsMetric, groupBy: AnalyticsDimension | undefined, topN: number): Aggregated {
  const accs = new Map<string, Accumulator>();
  const accFor = (bucketMs: number, tuple: Tuple): Accumulator => {
    const group = groupBy === undefined ? null : tuple[groupBy];
    const id = JSON.stringify([bucketMs, group]);
    let acc = accs.get(id);
    if (!acc) {
      acc = { bucketMs, group, count: 0, failed: 0, micros: 0, bins: new Map() };
      accs.set(id, acc);
    }
    return acc;
  };
  let totalCount = 0;
  for (const tuple of read.counts) {
    const acc = accFor(tuple.segment.bucketMs, tuple.ref.tuple);
    acc.count += tuple.count;
    if (tuple.ref.tuple.outcome === FAILED_OUTCOME) acc.failed += tuple.count;
    totalCount += tuple.count;
  }
  for (const cell of read.cells) addBins(accFor(cell.segment.bucketMs, cell.ref.tuple).bins, cell.bin, cell.count);
  for (const sum of read.sums) accFor(sum.segment.bucketMs, sum.ref.tuple).micros += sum.micros;

  const buckets = [...accs.values()]
    .filter((acc) => acc.count > 0)
    .sort((a, b) => a.bucketMs - b.bucketMs || compareCodeUnits(a.group ?? '', b.group ?? ''))
    .map((acc) => ({
      timestamp: new Date(acc.bucketMs).toISOString(),
      count: acc.count,
      group: acc.group,
      avg_duration_ms: null,
      error_rate: null,
      ...fields(metric, acc),
    }));
  const topEntries = metric === 'top_action_types' ? topActionTypes(read.counts, totalCount, topN) : [];
  return { buckets, topEntries, totalCount };
}
