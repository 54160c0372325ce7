import type { AuditRecord } from '@sluice/core';
import type { BulkWriteOp, StateStore, WriteOp } from '@sluice/state';
import { placementOf, type RecordPlacement } from './index-layout.js';
import type { IndexedRecord } from './ingest/ingest.js';
import { actionPointerKey, recordKey } from './keys.js';
import { dispatchedAtMs, encodeRecord, expiresAtMs, type RemovableRecord } from './record-codec.js';
import { globalMember, tenantMember } from './record-ref.js';

/*
 * The writes of one record. The value and the action pointer are written on the request path;
 * index entries are bulk writes, applied by the ingest (ingest/) with the rest of their batch.
 * With a hash chain, the value and the tenant indexes join the chain head's CAS (one slot).
 * Removal undoes exactly these.
 */

/** The record value: in the record's (namespace, tenant) slot. */
export function valueWrite(record: AuditRecord): WriteOp {
  return { op: 'set', key: recordKey(record, record.id), value: encodeRecord(record) };
}

/** Tenant indexes and the chain index, appended to `into`: in the record's slot (sharded or not, the same keys). */
export function addTenantIndexWrites(into: WriteOp[], record: IndexedRecord, placement: RecordPlacement = placementOf(record, false)): void {
  const member = tenantMember(record.id);
  const score = dispatchedAtMs(record);
  for (const index of placement.tenant) into.push({ op: 'indexAdd', index, member, score, fixedScore: true });
  if (placement.chain !== null && record.sequence_number !== null) {
    into.push({ op: 'indexAdd', index: placement.chain, member, score: record.sequence_number, fixedScore: true });
  }
}

/** Global indexes and the expiry index, appended to `into`: in the global scope, or in the record's shard of a sharded state. */
export function addGlobalIndexWrites(into: BulkWriteOp[], record: IndexedRecord, scopeCode: string, placement: RecordPlacement): void {
  const member = globalMember(record.id, scopeCode);
  const score = dispatchedAtMs(record);
  for (const index of placement.global) into.push({ op: 'indexAdd', index, member, score, fixedScore: true });
  const expiry = expiresAtMs(record);
  if (placement.expiry !== null && expiry !== null) into.push({ op: 'indexAdd', index: placement.expiry, member, score: expiry, fixedScore: true });
}

/**
 * The action pointer: a sorted set per action id with one member per record of that id (ids are
 * per tenant, so two tenants' records of one id are two members), scored by dispatch time so a
 * lookup reads the newest first. No TTL: records of one id may expire at different times (or
 * never), so removeRecord drops each member with its record, as it does index entries.
 */
export function pointerWrite(record: AuditRecord, scopeCode: string): WriteOp {
  return {
    op: 'indexAdd',
    index: actionPointerKey(record.action_id),
    member: globalMember(record.id, scopeCode),
    score: dispatchedAtMs(record),
    fixedScore: true,
  };
}

/** A record to remove, and the scope code of its global members. */
export interface Removal {
  record: RemovableRecord;
  scopeCode: string;
}

/**
 * Deletes records and their entries in every index placementOf names. Idempotent, so a rerun
 * after a crash, or two reapers racing on one record, are harmless. Returns, per record, whether
 * this call deleted its value (racing reapers never count one twice). Order, each a batch for
 * all the records: index entries, then the values, then the expiry entries last, so a reaper that
 * dies part-way leaves the expiry entries behind and the next run finishes the job.
 */
export async function removeRecords(store: StateStore, removals: readonly Removal[]): Promise<boolean[]> {
  if (removals.length === 0) return [];
  const entries: WriteOp[] = [];
  const expiries: WriteOp[] = [];
  for (const { record, scopeCode } of removals) {
    const placement = placementOf(record, store.sharded);
    const tm = tenantMember(record.id);
    const gm = globalMember(record.id, scopeCode);
    // Each entry's score goes along: the memory backend finds fixed-score entries by it.
    const at = dispatchedAtMs(record);
    for (const index of placement.tenant) entries.push({ op: 'indexRemove', index, member: tm, score: at });
    for (const index of placement.global) entries.push({ op: 'indexRemove', index, member: gm, score: at });
    if (placement.chain !== null) entries.push({ op: 'indexRemove', index: placement.chain, member: tm, score: record.sequence_number ?? undefined });
    entries.push({ op: 'indexRemove', index: actionPointerKey(record.action_id), member: gm, score: at });
    if (placement.expiry !== null) expiries.push({ op: 'indexRemove', index: placement.expiry, member: gm, score: expiresAtMs(record) ?? undefined });
  }
  await store.writeBatch(entries);
  const deleted = await Promise.all(removals.map(({ record }) => store.delete(recordKey(record, record.id))));
  if (expiries.length > 0) await store.writeBatch(expiries);
  return deleted;
}
