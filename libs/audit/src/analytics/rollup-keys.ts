import { createHash } from 'node:crypto';
import { GLOBAL_SCOPE, type StateKey } from '@sluice/state';
import { DAY_MS, HOUR_MS } from './time-buckets.js';

/**
 * Rollup key layout (see docs/audit.md "Analytics"):
 *
 *   analytics:{<ns>:<tenant>}:<g><n>/<tuple>/<bin>   counter: actions of the tuple in the bin
 *   analytics:{<ns>:<tenant>}:<g><n>/<tuple>/s       counter: sum of their durations, in µs
 *   analytics-ix:{_:_}:<g><n>                        index: one member per (tuple, bin) seen
 *
 * <g><n> is `h` + hours or `d` + days since the epoch; <tuple> is a 16-character hash of
 * (provider, action_type, outcome), so a key stays short whatever the names. Counters live in
 * their tenant's hash slot; the index is global because a query lists every tenant's tuples.
 */
export type Granularity = 'hour' | 'day';

export interface Tuple {
  namespace: string;
  tenant: string;
  provider: string;
  action_type: string;
  outcome: string;
}

/** A tuple with its key hash, computed once per tuple rather than once per key. */
export interface TupleRef {
  tuple: Tuple;
  hash: string;
}

export interface IndexedCell {
  ref: TupleRef;
  bin: number;
}

const COUNTER_KIND = 'analytics';
const INDEX_KIND = 'analytics-ix';

export function granularityMs(g: Granularity): number {
  return g === 'hour' ? HOUR_MS : DAY_MS;
}

function bucketTag(g: Granularity, startMs: number): string {
  return `${g === 'hour' ? 'h' : 'd'}${Math.floor(startMs / granularityMs(g))}`;
}

export function tupleRef(tuple: Tuple): TupleRef {
  const hash = createHash('sha256').update(JSON.stringify([tuple.provider, tuple.action_type, tuple.outcome])).digest('base64url').slice(0, 16);
  return { tuple, hash };
}

export function indexKey(g: Granularity, startMs: number): StateKey {
  return { kind: INDEX_KIND, ...GLOBAL_SCOPE, id: bucketTag(g, startMs) };
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

export function encodeMember(t: Tuple, bin: number): string {
  return JSON.stringify([t.namespace, t.tenant, t.provider, t.action_type, t.outcome, bin]);
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
    if (ref === undefined) this.refs.set(head, (ref = parseTuple(`${head}]`)));
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
