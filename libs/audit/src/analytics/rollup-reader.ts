import type { StateKey, StateStore } from '@sluice/state';
import { listMembers } from './index-listing.js';
import { mapLimit } from './map-limit.js';
import type { Segment } from './read-plan.js';
import { MemberDecoder, binKey, countKey, indexKey, sumKey, tenantIndexKey, type IndexedCell, type Tuple, type TupleRef } from './rollup-keys.js';

/** Actions of one tuple in one segment. */
interface TupleCount {
  segment: Segment;
  ref: TupleRef;
  count: number;
}

/** Actions of one tuple in one histogram bin of one segment. */
export interface CellCount extends IndexedCell {
  segment: Segment;
  count: number;
}

/** Summed durations (µs) of one tuple in one segment. */
export interface TupleSum {
  segment: Segment;
  ref: TupleRef;
  micros: number;
}

export interface RollupRead {
  counts: TupleCount[];
  /** Latency reads only. */
  cells: CellCount[];
  sums: TupleSum[];
}

interface ReadOptions {
  accept: (t: Tuple) => boolean;
  /** A tenant the query names: its own indexes are listed instead of the global ones. */
  tenant?: string | undefined;
  /** Read the bin counters and sums (percentiles, averages) instead of the count counters. */
  latency: boolean;
}

/**
 * Where a query's rollups come from: the state store's counters (readRollups, the default), or
 * a database's rollup table (the PostgreSQL trail keeps its own).
 */
export type RollupSource = (segments: Segment[], opts: ReadOptions) => Promise<RollupRead>;

/** The state store's rollups as a source. */
export function stateRollupSource(state: StateStore): RollupSource {
  return (segments, opts) => readRollups(state, segments, opts);
}

/**
 * The rollups of several sources as one: each record is counted by one of them (a trail that
 * moved its rollups keeps reading what was counted before the move), so their reads add up.
 */
export function combinedRollupSource(...sources: RollupSource[]): RollupSource {
  return async (segments, opts) => {
    const reads = await Promise.all(sources.map((source) => source(segments, opts)));
    return { counts: reads.flatMap((r) => r.counts), cells: reads.flatMap((r) => r.cells), sums: reads.flatMap((r) => r.sums) };
  };
}

const KEYS_PER_GET = 5000;
const IN_FLIGHT = 32;

async function getAll(state: StateStore, keys: StateKey[]): Promise<(string | null)[]> {
  const chunks: StateKey[][] = [];
  for (let i = 0; i < keys.length; i += KEYS_PER_GET) chunks.push(keys.slice(i, i + KEYS_PER_GET));
  return (await mapLimit(chunks, IN_FLIGHT, (chunk) => state.getMany(chunk))).flat();
}

/** The accepted tuples of each segment's index, with the bins each was seen in. */
async function listAccepted(state: StateStore, segments: Segment[], opts: ReadOptions): Promise<Map<TupleRef, number[]>[]> {
  const { tenant } = opts;
  const listed = await mapLimit(segments, IN_FLIGHT, (s) =>
    listMembers(state, tenant === undefined ? indexKey(s.granularity, s.startMs) : tenantIndexKey(s.granularity, s.startMs, tenant)),
  );
  const decoder = new MemberDecoder();
  const accepted = new Map<TupleRef, boolean>();
  return listed.map((members) => {
    const bins = new Map<TupleRef, number[]>();
    for (const member of members) {
      const cell = decoder.decode(member);
      if (!cell) continue;
      let ok = accepted.get(cell.ref);
      if (ok === undefined) {
        ok = opts.accept(cell.ref.tuple);
        accepted.set(cell.ref, ok);
      }
      if (!ok) continue;
      const seen = bins.get(cell.ref);
      if (seen) seen.push(cell.bin);
      else bins.set(cell.ref, [cell.bin]);
    }
    return bins;
  });
}

/**
 * Reads the counters of every accepted tuple listed in the segments' indexes: one index listing
 * per segment, then the counters in a few getMany calls. Cost grows with segments x distinct
 * tuples (x bins, for latency), never with the number of records. A latency read takes a tuple's
 * count as the sum of its bins, so counts and percentiles always agree.
 */
async function readRollups(state: StateStore, segments: Segment[], opts: ReadOptions): Promise<RollupRead> {
  const perSegment = await listAccepted(state, segments, opts);
  const tuples: { segment: Segment; ref: TupleRef }[] = [];
  const cells: { segment: Segment; cell: IndexedCell }[] = [];
  segments.forEach((segment, i) => {
    for (const [ref, bins] of perSegment[i] ?? []) {
      tuples.push({ segment, ref });
      if (opts.latency) for (const bin of bins) cells.push({ segment, cell: { ref, bin } });
    }
  });
  const keys = opts.latency
    ? [
        ...cells.map(({ segment, cell }) => binKey(segment.granularity, segment.startMs, cell.ref, cell.bin)),
        ...tuples.map(({ segment, ref }) => sumKey(segment.granularity, segment.startMs, ref)),
      ]
    : tuples.map(({ segment, ref }) => countKey(segment.granularity, segment.startMs, ref));
  const values = await getAll(state, keys);
  // An index entry without its counter (a crash between the writes of a batch) counts as 0.
  const num = (i: number) => Number(values[i] ?? 0) || 0;
  if (!opts.latency) {
    return { counts: tuples.map(({ segment, ref }, i) => ({ segment, ref, count: num(i) })).filter((c) => c.count > 0), cells: [], sums: [] };
  }
  const readCells = cells.map(({ segment, cell }, i) => ({ segment, ...cell, count: num(i) })).filter((c) => c.count > 0);
  const totals = new Map<Segment, Map<TupleRef, number>>();
  for (const c of readCells) {
    let bySegment = totals.get(c.segment);
    if (!bySegment) {
      bySegment = new Map();
      totals.set(c.segment, bySegment);
    }
    bySegment.set(c.ref, (bySegment.get(c.ref) ?? 0) + c.count);
  }
  return {
    counts: tuples.map(({ segment, ref }) => ({ segment, ref, count: totals.get(segment)?.get(ref) ?? 0 })).filter((c) => c.count > 0),
    cells: readCells,
    sums: tuples.map(({ segment, ref }, i) => ({ segment, ref, micros: num(cells.length + i) })),
  };
}
