import { StateAuditStore } from '@sluice/audit';
import { ManualClock, type AuditRecord } from '@sluice/core';
import { MemoryStateStore } from '@sluice/state';
import { variedDraft } from '../../../audit/test/support/records.js';

/**
 * Real records (ids, expiry, details) from the audit store's own append on a memory backend at
 * `baseMs`: variedDraft(i) for each i below n, kept for ttlOf(i) ms (null: for ever).
 */
export async function appendedRecords(n: number, baseMs: number, ttlOf: (i: number) => number | null = () => null): Promise<AuditRecord[]> {
  const state = new MemoryStateStore({ clock: new ManualClock(baseMs) });
  const maker = new StateAuditStore(state);
  const records: AuditRecord[] = [];
  for (let i = 0; i < n; i++) records.push(await maker.append(variedDraft(i, baseMs), { ttlMs: ttlOf(i), chain: false }));
  await maker.close();
  await state.close();
  return records;
}
