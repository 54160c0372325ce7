import { RecurringAction, type Clock } from '@sluice/core';
import { RecordRepository, type StateStore } from '@sluice/state';

/**
 * Recurring actions in the StateStore: records written only by compare-and-swap (an edit, a
 * pause and an occurrence claim racing on two processes serialize), at most `maxPerTenant` per
 * (namespace, tenant) pair however many replicas create at once, listed per pair in creation
 * order and all together for the workers' re-scheduling. Ids are server-made UUIDs, unique per pair.
 */
export function recurringRecords(state: StateStore, clock: Clock, maxPerTenant: number): RecordRepository<RecurringAction> {
  return new RecordRepository<RecurringAction>({
    state,
    clock,
    kind: 'recurring',
    label: 'recurring action',
    decode: (raw) => {
      const parsed = RecurringAction.safeParse(raw);
      return parsed.success ? parsed.data : null;
    },
    maxPerScope: maxPerTenant,
  });
}
