import type { StateKey, StateStore } from '@sluice/state';
import { listMembers } from '../analytics/index-listing.js';
import { mapLimit } from '../analytics/map-limit.js';
import { counterKey, decodeMember, indexKey, tenantIndexKey, tupleRef, type CoverageTuple, type TupleRef } from './coverage-keys.js';

/** Actions of one tuple on one day. */
export interface TupleCount {
  tuple: CoverageTuple;
  count: number;
}

/** Where a query's counters come from: the state store's (readCoverage, the default), or a database's table. */
export type CoverageSource = (days: readonly number[], accept: (t: CoverageTuple) => boolean, tenant: string | undefined) => Promise<TupleCount[]>;

/** The state store's counters as a source. */
export function stateCoverageSource(state: StateStore): CoverageSource {
  return (days, accept, tenant) => readCoverage(state, days, accept, tenant);
}

/** The counts of several sources as one: each record is counted by one of them, so they add up. */
export function combinedCoverageSource(...sources: CoverageSource[]): CoverageSource {
  return async (days, accept, tenant) => (await Promise.all(sources.map((source) => source(days, accept, tenant)))).flat();
}

const KEYS_PER_GET = 5000;
const IN_FLIGHT = 32;

/**
 * Reads the counter of every accepted tuple listed in the days' indexes: one index listing per
 * day (the tenant's own index when the query names a tenant), then the counters in a few
 * getMany calls. Cost grows with days x distinct tuples, never with the number of records.
 */
async function readCoverage(
  state: StateStore,
  days: readonly number[],
  accept: (t: CoverageTuple) => boolean,
  tenant: string | undefined,
): Promise<TupleCount[]> {
  const listed = await mapLimit(days, IN_FLIGHT, (day) => listMembers(state, tenant === undefined ? indexKey(day) : tenantIndexKey(day, tenant)));
  // A member recurs on many days: decode and judge it once per query.
  const decoded = new Map<string, TupleRef | null>();
  const wanted: { day: number; ref: TupleRef }[] = [];
  days.forEach((day, i) => {
    for (const member of listed[i] ?? []) {
      let ref = decoded.get(member);
      if (ref === undefined) {
        const t = decodeMember(member);
        ref = t !== null && accept(t) ? tupleRef(t) : null;
        decoded.set(member, ref);
      }
      if (ref) wanted.push({ day, ref });
    }
  });
  const keys = wanted.map(({ day, ref }) => counterKey(day, ref));
  const chunks: StateKey[][] = [];
  for (let i = 0; i < keys.length; i += KEYS_PER_GET) chunks.push(keys.slice(i, i + KEYS_PER_GET));
  const values = (await mapLimit(chunks, IN_FLIGHT, (chunk) => state.getMany(chunk))).flat();
  // An index entry without its counter (a crash between the writes of a batch) counts as 0.
  return wanted.map(({ ref }, i) => ({ tuple: ref.tuple, count: Number(values[i] ?? 0) || 0 })).filter((c) => c.count > 0);
}
