import type { AuditRecord, AuditVerifyInput, AuditVerifyResult } from '@sluice/core';
import type { StateStore } from '@sluice/state';
import { readChainHead, type ChainHead } from './hash-chain.js';
import { chainIndexKey, tenantIndexKey, type TenantScope } from './keys.js';
import { recordHash } from './record-hash.js';
import type { RecordReader } from './record-reader.js';

const BATCH = 500;
/** Tenant-index entries examined to find the first/last chained record of a time window. */
const WINDOW_SEARCH_BUDGET = 20_000;

/** One link as a chain's store holds it: its sequence number, and its record (null when missing or unreadable). */
interface ChainLink {
  seq: number;
  record: AuditRecord | null;
}

/** A time window on dispatched_at, epoch ms, inclusive; absent bounds are open. */
interface TimeWindow {
  fromMs?: number;
  toMs?: number;
}

/** Where a (namespace, tenant) chain is read from: the state store's chain index, or a table. */
export interface ChainSource {
  /** The sequence number of the first (`newest`: the last) chained record dispatched within the window; null when none. */
  edge(window: TimeWindow, newest: boolean): Promise<number | null>;
  /** Links with min ≤ seq ≤ max (absent: unbounded), in sequence order, at most `limit`. */
  links(bounds: { min?: number; max?: number }, limit: number): Promise<ChainLink[]>;
  /** The newest link as the chain head says; null before the first record. */
  head(): Promise<ChainHead | null>;
}

/**
 * Walks a (namespace, tenant) chain in sequence order and stops at the first record whose link
 * does not check: missing (its chain entry or value is gone), out of sequence, hash not matching
 * its fields, previous_hash not the predecessor's record_hash, or belonging to another scope.
 * The first record walked is checked against its predecessor when that still exists; a chain
 * whose oldest records were reaped (retention) starts at the oldest remaining one.
 * from/to select the sequence range between the first chained record dispatched at/after `from`
 * and the last dispatched at/before `to`.
 */
export function verifyChain(store: StateStore, reader: RecordReader, input: AuditVerifyInput, opts: VerifyOptions = {}): Promise<AuditVerifyResult> {
  return verifyChainOf(stateChain(store, reader, input), input, opts);
}

export interface VerifyOptions {
  /**
   * Immutable audit: the records written without an expiry may not have left the chain. It must
   * hold every link from the head's `k` (the first of its newest run of records without expiry)
   * up to the head, so deleting the oldest of them, or all of them, is a break; records before
   * `k` may have expired under an earlier mode. Otherwise a chain may start wherever retention left it.
   */
  complete?: boolean;
}

/** The walk of verifyChain over any chain source. */
export async function verifyChainOf(source: ChainSource, input: AuditVerifyInput, opts: VerifyOptions = {}): Promise<AuditVerifyResult> {
  const scope = { namespace: input.namespace, tenant: input.tenant };
  const range = await sequenceRange(source, input);
  if (range === null) return { valid: true, records_checked: 0 };
  // Read before walking: every link up to this head was already written (same CAS).
  const head = range.max === undefined ? await source.head() : null;
  const result: AuditVerifyResult = { valid: true, records_checked: 0 };
  let previous: AuditRecord | null = null;
  if (range.min !== undefined && range.min > 0) {
    const [before] = await source.links({ min: range.min - 1, max: range.min - 1 }, 1);
    previous = before?.record ?? null;
  }
  let expected: number | null = range.min ?? null;
  // The first link a complete chain must still hold (null: none required).
  const keptFrom = opts.complete && range.min === undefined ? (head?.k ?? null) : null;
  let from = range.min;

  for (;;) {
    const bounds = { ...(from !== undefined ? { min: from } : {}), ...(range.max !== undefined ? { max: range.max } : {}) };
    const links = await source.links(bounds, BATCH);
    for (const { seq, record } of links) {
      // Records kept for good missing from the start of the walk.
      if (expected === null && keptFrom !== null && seq > keptFrom) return broken(result, keptFrom);
      // A gap: the record at `expected` is gone.
      if (expected !== null && seq !== expected) return broken(result, Math.min(seq, expected));
      if (record === null) return broken(result, seq);
      result.records_checked++;
      result.first_record_id ??= record.id;
      result.last_record_id = record.id;
      if (!linkChecks(record, seq, scope, previous)) return broken(result, seq);
      previous = record;
      expected = seq + 1;
    }
    if (links.length < BATCH) break;
    from = (links.at(-1)?.seq ?? 0) + 1;
  }
  // A complete chain with none of its kept records left at all.
  if (previous === null && keptFrom !== null) return broken(result, keptFrom);
  // The head names the newest link: records cut from the end of the chain show up here.
  if (head !== null && previous !== null && expected !== null) {
    if (expected <= head.s) return broken(result, expected);
    if (previous.sequence_number === head.s && previous.record_hash !== head.h) return broken(result, head.s);
  }
  return result;
}

/** A chain in the state store: its chain index (scored by sequence number) and record values. */
function stateChain(store: StateStore, reader: RecordReader, input: AuditVerifyInput): ChainSource {
  const scope = { namespace: input.namespace, tenant: input.tenant };
  return {
    edge: (window, newest) =>
      edgeSequence(store, reader, scope, {
        ...(window.fromMs !== undefined ? { min: window.fromMs } : {}),
        ...(window.toMs !== undefined ? { max: window.toMs } : {}),
        rev: newest,
      }),
    head: () => readChainHead(store, scope),
    async links(bounds, limit) {
      const entries = await store.indexRange(chainIndexKey(scope), { ...bounds, limit });
      const records = await reader.readMembers(
        entries.map((e) => e.member),
        scope,
      );
      return entries.map((e, i) => ({ seq: e.score, record: records[i] ?? null }));
    },
  };
}

/** Whether `record` is a sound link at `seq` after `previous` (null: the first record walked, predecessor gone). */
function linkChecks(record: AuditRecord, seq: number, scope: TenantScope, previous: AuditRecord | null): boolean {
  if (record.sequence_number !== seq || record.namespace !== scope.namespace || record.tenant !== scope.tenant) return false;
  if (record.record_hash !== recordHash(record)) return false;
  if (seq === 0) return record.previous_hash === null;
  // Without a predecessor (the chain's start was reaped) there is nothing to link it to.
  return previous === null ? record.previous_hash !== null : record.previous_hash === previous.record_hash;
}

function broken(result: AuditVerifyResult, seq: number): AuditVerifyResult {
  return { ...result, valid: false, first_broken_at: seq };
}

/**
 * Sequence bounds of the from/to window (absent: unbounded): from the first chained record
 * dispatched at/after `from` to the last at/before `to`; null when the window holds none.
 */
async function sequenceRange(source: ChainSource, input: AuditVerifyInput): Promise<{ min?: number; max?: number } | null> {
  const window: TimeWindow = {
    ...(input.from !== undefined ? { fromMs: Date.parse(input.from) } : {}),
    ...(input.to !== undefined ? { toMs: Date.parse(input.to) } : {}),
  };
  const range: { min?: number; max?: number } = {};
  if (window.fromMs !== undefined) {
    const min = await source.edge(window, false);
    if (min === null) return null;
    range.min = min;
  }
  if (window.toMs !== undefined) {
    const max = await source.edge(window, true);
    if (max === null) return null;
    range.max = max;
  }
  return range;
}

/** Sequence number of the first chained record in the tenant index walking from one end of the window. */
async function edgeSequence(
  store: StateStore,
  reader: RecordReader,
  scope: TenantScope,
  window: { min?: number; max?: number; rev: boolean },
): Promise<number | null> {
  const index = tenantIndexKey(scope);
  for (let offset = 0; offset < WINDOW_SEARCH_BUDGET; offset += BATCH) {
    const entries = await store.indexRange(index, { ...window, offset, limit: BATCH });
    const records = await reader.readMembers(
      entries.map((e) => e.member),
      scope,
    );
    const chained = records.find((r) => r !== null && r.sequence_number !== null);
    if (chained?.sequence_number != null) return chained.sequence_number;
    if (entries.length < BATCH) return null;
  }
  return null;
}
