import { GLOBAL_SCOPE, shareKey, type StateKey } from '@sluice/state';
import { DAY_MS, HOUR_MS } from './time-buckets.js';
import { tupleHash } from './tuple-hash.js';

/**
 * Rollup key layout (see docs/audit.md "Analytics"):
 *
 *   analytics:{<ns>:<tenant>}:<g><n>/<tuple>/<bin>   counter: actions of the tuple in the bin
 *   analytics:{<ns>:<tenant>}:<g><n>/<tuple>/c       counter: actions of the tuple (all bins)
 *   analytics:{<ns>:<tenant>}:<g><n>/<tuple>/s       counter: sum of their durations, in µs
 *   analytics-ix:{_:_}:<g><n>                        index: one member per (tuple, bin) seen
 *   analytics-tix:{_:<tenant>}:<g><n>                index: the same, for one tenant name
 *
 * <g><n> is `h` + hours or `d` + days since the epoch; <tuple> is a 16-character hash of the
 * tuple, so a key stays short whatever the names. Counters live in their tenant's hash slot. The
 * global index serves queries without a tenant; the tenant's index (keyed by the tenant name
 * alone, since single-tenant callers name no namespace) serves the others, namespace or not.
 * A member's score is the tuple's hash rank × 128 + bin: distinct but by (rare) chance, so
 * listings page by score (index-listing.ts).
 */
export type Granularity = 'hour' | 'day';

export interface Tuple {
  namespace: string;
  tenant: string;
  provider: string;
  action_type: string;
  outcome: string;
}

/** A tuple with its key hash and score rank, computed once per tuple rather than once per key. */
export interface TupleRef {
  tuple: Tuple;
  hash: string;
  rank: number;
}

export interface IndexedCell {
  ref: TupleRef;
  bin: number;
}

const COUNTER_KIND = 'analytics';
const INDEX_KIND = 'analytics-ix';
const TENANT_INDEX_KIND = 'analytics-tix';
/** Every kind of key the analytics rollups write. */
export const ANALYTICS_KINDS = [COUNTER_KIND, INDEX_KIND, TENANT_INDEX_KIND] as const;
/** Score slots per tuple: more than the histogram's 105 bins. */
const BIN_SLOTS = 128;

export function granularityMs(g: Granularity): number {
  return g === 'hour' ? HOUR_MS : DAY_MS;
}

function bucketTag(g: Granularity, startMs: number): string {
  return `${g === 'hour' ? 'h' : 'd'}${Math.floor(startMs / granularityMs(g))}`;
}

export function tupleRef(tuple: Tuple): TupleRef {
  return { tuple, ...tupleHash([tuple.namespace, tuple.tenant, tuple.provider, tuple.action_type, tuple.outcome]) };
}

/** The bucket's index of every tenant's members. */
export function indexKey(g: Granularity, startMs: number): StateKey {
  return { kind: INDEX_KIND, ...GLOBAL_SCOPE, id: bucketTag(g, startMs) };
}

/** The bucket's index of one tenant name's members (every namespace). */
export function tenantIndexKey(g: Granularity, startMs: number, tenant: string): StateKey {
  return { kind: TENANT_INDEX_KIND, namespace: GLOBAL_SCOPE.namespace, tenant, id: bucketTag(g, startMs) };
}

function counterKey(g: Granularity, startMs: number, ref: TupleRef, field: string): StateKey {
  return { kind: COUNTER_KIND, namespace: ref.tuple.namespace, tenant: ref.tuple.tenant, id: `${bucketTag(g, startMs)}/${ref.hash}/${field}` };
}

export function binKey(g: Granularity, startMs: number, ref: TupleRef, bin: number): StateKey {
  return counterKey(g, startMs, ref, String(bin));
}

export function sumKey(g: Granularity, startMs: number, ref: TupleRef): StateKey {
  return counterKey(g, startMs, ref, 's');
}

export function countKey(g: Granularity, startMs: number, ref: TupleRef): StateKey {
  return counterKey(g, startMs, ref, 'c');
}

/** What one record writes in one bucket for its tuple and latency bin: keys shared (shareKey), built once per cell. */
export interface RollupCell {
  tuple: Tuple;
  bin: StateKey;
  sum: StateKey;
  count: StateKey;
  index: StateKey;
  tenantIndex: StateKey;
  member: string;
  score: number;
}

export function rollupCell(g: Granularity, startMs: number, ref: TupleRef, bin: number): RollupCell {
  return {
    tuple: ref.tuple,
    bin: shareKey(binKey(g, startMs, ref, bin)),
    sum: shareKey(sumKey(g, startMs, ref)),
    count: shareKey(countKey(g, startMs, ref)),
    index: shareKey(indexKey(g, startMs)),
    tenantIndex: shareKey(tenantIndexKey(g, startMs, ref.tuple.tenant)),
    member: encodeMember(ref.tuple, bin),
    score: memberScore(ref, bin),
  };
}

/** A cell's bucket and bin as one number (hours since the epoch stay far below 2^46). */
export function cellNumber(g: Granularity, startMs: number, bin: number): number {
  return Math.floor(startMs / granularityMs(g)) * BIN_SLOTS + bin;
}

export function sameTuple(a: Tuple, b: Tuple): boolean {
  return a.namespace === b.namespace && a.tenant === b.tenant && a.provider === b.provider && a.action_type === b.action_type && a.outcome === b.outcome;
}

export function encodeMember(t: Tuple, bin: number): string {
  return JSON.stringify([t.namespace, t.tenant, t.provider, t.action_type, t.outcome, bin]);
}

function memberScore(ref: TupleRef, bin: number): number {
  return ref.rank * BIN_SLOTS + bin;
}

/**
 * Decodes index members. A member is the tuple's JSON array with the bin appended, so the tuple
 * part is shared by every bin of a tuple: it is parsed and hashed once per decoder (one query).
 */
export class MemberDecoder {
  private readonly refs = new Map<string, TupleRef | null>();

  /** Null for a member this code did not write (it is skipped, not fatal). */
  decode(member: string): IndexedCell | null {
    const comma = member.lastIndexOf(',');
    const bin = Number(member.slice(comma + 1, -1));
    if (comma < 0 || !member.endsWith(']') || !Number.isInteger(bin)) return null;
    const head = member.slice(0, comma);
    let ref = this.refs.get(head);
    if (ref === undefined) {
      ref = parseTuple(`${head}]`);
      this.refs.set(head, ref);
    }
    return ref === null ? null : { ref, bin };
  }
}

function parseTuple(json: string): TupleRef | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 5 || !parsed.every((x) => typeof x === 'string')) return null;
  const [namespace, tenant, provider, action_type, outcome] = parsed as [string, string, string, string, string];
  return tupleRef({ namespace, tenant, provider, action_type, outcome });
}
