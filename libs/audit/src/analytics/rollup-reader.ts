import type { StateKey, StateStore } from '@sluice/state';
import { mapLimit } from './map-limit.js';
import type { Segment } from './read-plan.js';
import { MemberDecoder, binKey, indexKey, sumKey, type IndexedCell, type Tuple, type TupleRef } from './rollup-keys.js';

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
  cells: CellCount[];
  sums: TupleSum[];
}

const INDEX_PAGE = 5000;
const KEYS_PER_GET = 5000;
const IN_FLIGHT = 32;

async function listIndex(state: StateStore, key: StateKey): Promise<string[]> {
  const members: string[] = [];
  for (let offset = 0; ; offset += INDEX_PAGE) {
    const page = await state.indexRange(key, { offset, limit: INDEX_PAGE });
    for (const entry of page) members.push(entry.member);
    if (page.length < INDEX_PAGE) return members;
  }
}

async function getAll(state: StateStore, keys: StateKey[]): Promise<(string | null)[]> {
  const chunks: StateKey[][] = [];
  for (let i = 0; i < keys.length; i += KEYS_PER_GET) chunks.push(keys.slice(i, i + KEYS_PER_GET));
  return (await mapLimit(chunks, IN_FLIGHT, (chunk) => state.getMany(chunk))).flat();
}

/**
 * Reads the counters of every accepted (tuple, bin) listed in the segments' indexes: one index
 * listing per segment, then the counters in a few getMany calls. Cost grows with segments x
 * distinct (tuple, bin), never with the number of records. Sums are read only when asked for.
 */
export async function readRollups(state: StateStore, segments: Segment[], accept: (t: Tuple) => boolean, withSums: boolean): Promise<RollupRead> {
  const listed = await mapLimit(segments, IN_FLIGHT, (s) => listIndex(state, indexKey(s.granularity, s.startMs)));
  const decoder = new MemberDecoder();
  const accepted = new Map<TupleRef, boolean>();
  const wanted: { segment: Segment; cell: IndexedCell }[] = [];
  const summed: { segment: Segment; ref: TupleRef }[] = [];
  segments.forEach((segment, i) => {
    const refsSeen = new Set<TupleRef>();
    for (const member of listed[i] ?? []) {
      const cell = decoder.decode(member);
      if (!cell) continue;
      let ok = accepted.get(cell.ref);
      if (ok === undefined) accepted.set(cell.ref, (ok = accept(cell.ref.tuple)));
      if (!ok) continue;
      wanted.push({ segment, cell });
      if (withSums && !refsSeen.has(cell.ref)) {
        refsSeen.add(cell.ref);
        summed.push({ segment, ref: cell.ref });
      }
    }
  });
  const keys = [
    ...wanted.map(({ segment, cell }) => binKey(segment.granularity, segment.startMs, cell.ref, cell.bin)),
    ...summed.map(({ segment, ref }) => sumKey(segment.granularity, segment.startMs, ref)),
  ];
  const values = await getAll(state, keys);
  // An index entry without its counter (a crash between the writes of a batch) counts as 0.
  const num = (i: number) => Number(values[i] ?? 0) || 0;
  return {
    cells: wanted.map(({ segment, cell }, i) => ({ segment, ...cell, count: num(i) })).filter((c) => c.count > 0),
    sums: summed.map(({ segment, ref }, i) => ({ segment, ref, micros: num(wanted.length + i) })),
  };
}
