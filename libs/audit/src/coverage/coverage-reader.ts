import type { StateKey, StateStore } from '@sluice/state';
import { mapLimit } from '../analytics/map-limit.js';
import { counterKey, decodeMember, indexKey, tupleRef, type CoverageTuple, type TupleRef } from './coverage-keys.js';

/** Actions of one tuple on one day. */
export interface TupleCount {
  tuple: CoverageTuple;
  count: number;
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

/**
 * Reads the counter of every accepted tuple listed in the days' indexes: one index listing per
 * day, then the counters in a few getMany calls. Cost grows with days x distinct tuples, never
 * with the number of records.
 */
export async function readCoverage(state: StateStore, days: readonly number[], accept: (t: CoverageTuple) => boolean): Promise<TupleCount[]> {
  const listed = await mapLimit(days, IN_FLIGHT, (day) => listIndex(state, indexKey(day)));
  // A member recurs on many days: decode and judge it once per query.
  const decoded = new Map<string, TupleRef | null>();
  const wanted: { day: number; ref: TupleRef }[] = [];
  days.forEach((day, i) => {
    for (const member of listed[i] ?? []) {
      let ref = decoded.get(member);
      if (ref === undefined) {
        const t = decodeMember(member);
        decoded.set(member, (ref = t !== null && accept(t) ? tupleRef(t) : null));
      }
      if (ref) wanted.push({ day, ref });
    }
  });
  const keys = wanted.map(({ day, ref }) => counterKey(day, ref));
  const chunks: StateKey[][] = [];
  for (let i = 0; i < keys.length; i += KEYS_PER_GET) chunks.push(keys.slice(i, i + KEYS_PER_GET));
  const values = (await mapLimit(chunks, IN_FLIGHT, (chunk) => state.getMany(chunk))).flat();
  // An index entry without its counter (a crash between the two writes) counts as 0.
  return wanted.map(({ ref }, i) => ({ tuple: ref.tuple, count: Number(values[i] ?? 0) || 0 })).filter((c) => c.count > 0);
}
