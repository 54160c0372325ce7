import { createHash } from 'node:crypto';
import { GLOBAL_SCOPE, type StateKey } from '@sluice/state';
import { DAY_MS } from '../analytics/time-buckets.js';

/**
 * Coverage key layout (see docs/rules.md "Coverage"), one bucket per UTC day:
 *
 *   coverage:{<ns>:<tenant>}:d<n>/<hash>   counter: actions of the tuple that day
 *   coverage-ix:{_:_}:d<n>                 index: one member per tuple seen that day
 *
 * <n> is days since the epoch; a tuple is (namespace, tenant, provider, action_type,
 * matched_rule or null) and <hash> 16 base64url characters of SHA-256 over the last three, so a
 * key stays short whatever the names. Counters live in their tenant's hash slot; the index is
 * global because a query lists every tenant's tuples.
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

function dayTag(dayMs: number): string {
  return `d${Math.floor(dayMs / DAY_MS)}`;
}

export function indexKey(dayMs: number): StateKey {
  return { kind: INDEX_KIND, ...GLOBAL_SCOPE, id: dayTag(dayMs) };
}

/** A tuple with its key hash, computed once per tuple rather than once per key. */
export interface TupleRef {
  tuple: CoverageTuple;
  hash: string;
}

export function tupleRef(tuple: CoverageTuple): TupleRef {
  // JSON keeps a rule named "null" apart from no rule.
  const hash = createHash('sha256').update(JSON.stringify([tuple.provider, tuple.action_type, tuple.matched_rule])).digest('base64url').slice(0, 16);
  return { tuple, hash };
}

export function counterKey(dayMs: number, ref: TupleRef): StateKey {
  return { kind: COUNTER_KIND, namespace: ref.tuple.namespace, tenant: ref.tuple.tenant, id: `${dayTag(dayMs)}/${ref.hash}` };
}

export function encodeMember(t: CoverageTuple): string {
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
