/**
 * The fixed latency histogram behind p50/p95/p99. Bin upper bounds are 2^(i/4) ms for
 * i = -8..96 (0.25 ms .. ~4.7 h), rounded to 3 significant digits: consecutive bounds differ by
 * at most 19.6 %. A duration falls in the first bin whose bound is >= it (above the last bound:
 * the last bin). A percentile is the bound of the bin holding the nearest-rank sample, so it is
 * never below the exact value and less than 1.2x above it (0.25 ms for anything at or below it).
 *
 * The layout is part of the stored data: changing it needs a new rollup key kind.
 */
export const LATENCY_BOUNDS_MS: readonly number[] = Array.from({ length: 105 }, (_, i) => Number((2 ** ((i - 8) / 4)).toPrecision(3)));

const LAST_BIN = LATENCY_BOUNDS_MS.length - 1;

/** The bin of a duration (binary search for the first bound >= durationMs). */
export function binOf(durationMs: number): number {
  let lo = 0;
  let hi = LAST_BIN;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (durationMs <= (LATENCY_BOUNDS_MS[mid] ?? Infinity)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Per-bin counts of one bucket, by bin number. */
export type BinCounts = Map<number, number>;

export function addBins(into: BinCounts, bin: number, count: number): void {
  into.set(bin, (into.get(bin) ?? 0) + count);
}

/**
 * The p-th percentile (0 < p <= 100) by nearest rank: the bound of the bin holding the
 * ceil(p/100 * total)-th smallest sample. Null for an empty histogram.
 */
export function percentile(bins: BinCounts, total: number, p: number): number | null {
  if (total <= 0) return null;
  // p * total first: integer arithmetic, so a rank like 95 is not pushed to 96 by float error.
  const rank = Math.max(1, Math.ceil((p * total) / 100));
  let seen = 0;
  for (const bin of [...bins.keys()].sort((a, b) => a - b)) {
    seen += bins.get(bin) ?? 0;
    if (seen >= rank) return LATENCY_BOUNDS_MS[bin] ?? null;
  }
  return null;
}
