import type { StateKey, StateStore, WriteOp } from '@sluice/state';
import type { RecordReader } from './record-reader.js';
import { memberScopeCode } from './record-ref.js';
import { removeRecords, type Removal } from './record-writes.js';

/**
 * Removes the records named by members of a global index (the expiry index, or the global index
 * when evicting), each from every index it was added to. A member whose record is already gone is
 * dropped from `source`, so it is not met again. Returns how many records this call deleted, so
 * racing reapers never count one twice.
 */
export async function reapMembers(store: StateStore, reader: RecordReader, source: StateKey, members: readonly string[]): Promise<number> {
  if (members.length === 0) return 0;
  const records = await reader.readRemovable(members);
  const removals: Removal[] = [];
  const gone: WriteOp[] = [];
  members.forEach((member, i) => {
    const record = records[i] ?? null;
    if (record !== null) removals.push({ record, scopeCode: memberScopeCode(member) });
    else gone.push({ op: 'indexRemove', index: source, member });
  });
  const deleted = await removeRecords(store, removals);
  if (gone.length > 0) await store.writeBatch(gone);
  return deleted.filter(Boolean).length;
}
