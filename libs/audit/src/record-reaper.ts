import type { StateKey, StateStore } from '@sluice/state';
import type { RecordReader } from './record-reader.js';
import { memberScopeCode } from './record-ref.js';
import { removeRecord } from './record-writes.js';

/**
 * Removes the records named by members of a global index (the expiry index, or the global index
 * when evicting), each from every index it was added to. A member whose record is already gone is
 * dropped from `source`, so it is not met again. Returns how many records this call deleted, so
 * racing reapers never count one twice.
 */
export async function reapMembers(store: StateStore, reader: RecordReader, source: StateKey, members: readonly string[]): Promise<number> {
  if (members.length === 0) return 0;
  const records = await reader.readMembers(members, null);
  const removed = await Promise.all(
    members.map(async (member, i) => {
      const record = records[i] ?? null;
      if (record !== null) return removeRecord(store, record, memberScopeCode(member));
      await store.indexRemove(source, member);
      return false;
    }),
  );
  return removed.filter(Boolean).length;
}
