import type { AuditRecord, AuditVerifyInput, AuditVerifyResult } from '@sluice/core';
import type { StateStore } from '@sluice/state';
import { tenantAllIndex } from './index-layout.js';
import { readChainHead } from './hash-chain.js';
import { chainIndexKey, type TenantScope } from './keys.js';
import { recordHash } from './record-hash.js';
import type { RecordReader } from './record-reader.js';

const BATCH = 500;
/** Tenant-index entries examined to find the first/last chained record of a time window. */
const WINDOW_SEARCH_BUDGET = 20_000;

/**
 * Walks a (namespace, tenant) chain in sequence order and stops at the first record whose link
 * does not check: missing (its chain entry or value is gone), out of sequence, hash not matching
 * its fields, previous_hash not the predecessor's record_hash, or belonging to another scope.
 * The first record walked is checked against its predecessor when that still exists; a chain
 * whose oldest records were reaped (retention) starts at the oldest remaining one.
 * from/to select the sequence range between the first chained record dispatched at/after `from`
 * and the last dispatched at/before `to`.
 */
export async function verifyChain(store: StateStore, reader: RecordReader, input: AuditVerifyInput): Promise<AuditVerifyResult> {
  const scope = { namespace: input.namespace, tenant: input.tenant };
  const index = chainIndexKey(scope);
  const range = await sequenceRange(store, reader, scope, input);
  if (range === null) return { valid: true, records_checked: 0 };
  // Read before walking: every link up to this head was already indexed (same CAS).
  const head = range.max === undefined ? await readChainHead(store, scope) : null;
  const result: AuditVerifyResult = { valid: true, records_checked: 0 };
  let previous = range.min !== undefined && range.min > 0 ? await chainRecordAt(store, reader, scope, range.min - 1) : null;
  let expected: number | null = range.min ?? null;
  let from = range.min;

  for (;;) {
    const bounds = { ...(from !== undefined ? { min: from } : {}), ...(range.max !== undefined ? { max: range.max } : {}) };
    const entries = await store.indexRange(index, { ...bounds, limit: BATCH });
    const records = await reader.readMembers(
      entries.map((e) => e.member),
      scope,
    );
    for (const [i, entry] of entries.entries()) {
      const seq = entry.score;
      // A gap in the index: the record at `expected` is gone.
      if (expected !== null && seq !== expected) return broken(result, Math.min(seq, expected));
      const record = records[i] ?? null;
      if (record === null) return broken(result, seq);
      result.records_checked++;
      result.first_record_id ??= record.id;
      result.last_record_id = record.id;
      if (!linkChecks(record, seq, scope, previous)) return broken(result, seq);
      previous = record;
      expected = seq + 1;
    }
    if (entries.length < BATCH) break;
    from = (entries.at(-1)?.score ?? 0) + 1;
  }
  // The head names the newest link: records cut from the end of the chain show up here.
  if (head !== null && previous !== null && expected !== null) {
    if (expected <= head.s) return broken(result, expected);
    if (previous.sequence_number === head.s && previous.record_hash !== head.h) return broken(result, head.s);
  }
  return result;
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

async function chainRecordAt(store: StateStore, reader: RecordReader, scope: TenantScope, seq: number): Promise<AuditRecord | null> {
  const [entry] = await store.indexRange(chainIndexKey(scope), { min: seq, max: seq, limit: 1 });
  if (entry === undefined) return null;
  const [record] = await reader.readMembers([entry.member], scope);
  return record ?? null;
}

/** Sequence bounds of the window (absent: unbounded); null when the window holds no chained record. */
async function sequenceRange(
  store: StateStore,
  reader: RecordReader,
  scope: TenantScope,
  input: AuditVerifyInput,
): Promise<{ min?: number; max?: number } | null> {
  const fromMs = input.from === undefined ? undefined : Date.parse(input.from);
  const toMs = input.to === undefined ? undefined : Date.parse(input.to);
  const range: { min?: number; max?: number } = {};
  if (fromMs !== undefined) {
    const seq = await edgeSequence(store, reader, scope, { min: fromMs, ...(toMs !== undefined ? { max: toMs } : {}), rev: false });
    if (seq === null) return null;
    range.min = seq;
  }
  if (toMs !== undefined) {
    const seq = await edgeSequence(store, reader, scope, { ...(fromMs !== undefined ? { min: fromMs } : {}), max: toMs, rev: true });
    if (seq === null) return null;
    range.max = seq;
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
  const index = tenantAllIndex(scope);
  for (let offset = 0; offset < WINDOW_SEARCH_BUDGET; offset += BATCH) {
    const entries = await store.indexRange(index.key, { ...window, offset, limit: BATCH });
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
