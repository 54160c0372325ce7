import { GLOBAL_SCOPE, shareKey, type StateKey } from '@sluice/state';
import { DAY_MS } from '../analytics/time-buckets.js';
import { tupleHash } from '../analytics/tuple-hash.js';

/**
 * Coverage key layout (see docs/rules.md "Coverage"), one bucket per UTC day:
 *
 *   coverage:{<ns>:<tenant>}:d<n>/<hash>   counter: actions of the tuple that day
 *   coverage-ix:{_:_}:d<n>                 index: one member per tuple seen that day
 *   coverage-tix:{_:<tenant>}:d<n>         index: the same, for one tenant name
 *
 * <n> is days since the epoch; a tuple is (namespace, tenant, provider, action_type,
 * matched_rule or null) and <hash> 16 base64url characters of SHA-256 over it, so a key stays
 * short whatever the names. Counters live in their tenant's hash slot. The global index serves
 * queries without a tenant, the tenant's (keyed by the tenant name alone) the others. A member's
 * score is the tuple's hash rank: distinct, so listings page by score.
 */
export interface CoverageTuple {
  namespace: string;
  tenant: string;
  provider: string;
  action_type: string;
  matched_rule: string | null;
}

const COUNTER_KIND = 'coverage';
const INDEX_KIND = 'coverage-ix';
const TENANT_INDEX_KIND = 'coverage-tix';
/** Every kind of key the coverage rollups write. */
export const COVERAGE_KINDS = [COUNTER_KIND, INDEX_KIND, TENANT_INDEX_KIND] as const;

function dayTag(dayMs: number): string {
  return `d${Math.floor(dayMs / DAY_MS)}`;
}

/** The day's index of every tenant's tuples. */
export function indexKey(dayMs: number): StateKey {
  return { kind: INDEX_KIND, ...GLOBAL_SCOPE, id: dayTag(dayMs) };
}

/** The day's index of one tenant name's tuples (every namespace). */
export function tenantIndexKey(dayMs: number, tenant: string): StateKey {
  return { kind: TENANT_INDEX_KIND, namespace: GLOBAL_SCOPE.namespace, tenant, id: dayTag(dayMs) };
}

/** A tuple with its key hash and score rank, computed once per tuple rather than once per key. */
export interface TupleRef {
  tuple: CoverageTuple;
  hash: string;
  rank: number;
}

export function tupleRef(tuple: CoverageTuple): TupleRef {
  return { tuple, ...tupleHash([tuple.namespace, tuple.tenant, tuple.provider, tuple.action_type, tuple.matched_rule]) };
}

export function counterKey(dayMs: number, ref: TupleRef): StateKey {
  return { kind: COUNTER_KIND, namespace: ref.tuple.namespace, tenant: ref.tuple.tenant, id: `${dayTag(dayMs)}/${ref.hash}` };
}

/** What one record writes in one day for its tuple: keys shared (shareKey), built once per cell. */
export interface CoverageCell {
  tuple: CoverageTuple;
  counter: StateKey;
  index: StateKey;
  tenantIndex: StateKey;
  member: string;
  score: number;
}

export function coverageCell(dayMs: number, ref: TupleRef): CoverageCell {
  return {
    tuple: ref.tuple,
    counter: shareKey(counterKey(dayMs, ref)),
    index: shareKey(indexKey(dayMs)),
    tenantIndex: shareKey(tenantIndexKey(dayMs, ref.tuple.tenant)),
    member: encodeMember(ref.tuple),
    score: ref.rank,
  };
}

export function sameTuple(a: CoverageTuple, b: CoverageTuple): boolean {
  return (
    a.namespace === b.namespace && a.tenant === b.tenant && a.provider === b.provider && a.action_type === b.action_type && a.matched_rule === b.matched_rule
  );
}

function encodeMember(t: CoverageTuple): string {
  return JSON.stringify([t.namespace, t.tenant, t.provider, t.action_type, t.matched_rule]);
}

/** Null for a member this code did not write (it is skipped, not fatal). */
export function decodeMember(member: string): CoverageTuple | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(member);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 5) return null;
  const [namespace, tenant, provider, action_type, matched_rule] = parsed as unknown[];
  if (typeof namespace !== 'string' || typeof tenant !== 'string' || typeof provider !== 'string' || typeof action_type !== 'string') return null;
  if (matched_rule !== null && typeof matched_rule !== 'string') return null;
  return { namespace, tenant, provider, action_type, matched_rule };
}
