/**
 * Provider latency as a fixed-bucket histogram: mergeable by adding counts (each replica's
 * minute buckets sum to the cluster's), percentiles read by interpolating within a bucket, so an
 * estimate is always inside the bucket of the true value.
 */

/** Upper bounds (ms) of the buckets, about ×1.6 apart; one more bucket holds everything above the last. */
export const LATENCY_BOUNDS_MS = [1, 2, 3, 5, 8, 13, 20, 30, 50, 80, 130, 200, 300, 500, 800, 1300, 2000, 3000, 5000, 8000, 13000, 20000, 30000, 60000];

export function bucketOf(ms: number): number {
  const i = LATENCY_BOUNDS_MS.findIndex((bound) => ms <= bound);
  return i < 0 ? LATENCY_BOUNDS_MS.length : i;
}

/** The q-quantile (0 < q ≤ 1) of a histogram's counts; 0 when it is empty. */
export function quantile(counts: readonly number[], q: number): number {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return 0;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i] ?? 0;
    if (n > 0 && below + n >= rank) {
      const lower = i === 0 ? 0 : (LATENCY_BOUNDS_MS[i - 1] as number);
      // The overflow bucket has no upper bound: report its lower one.
      const upper = LATENCY_BOUNDS_MS[i] ?? lower;
      return round1(lower + ((upper - lower) * (rank - below)) / n);
    }
    below += n;
  }
  return round1(LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1] as number);
}

function round1(ms: number): number {
  return Math.round(ms * 10) / 10;
}
