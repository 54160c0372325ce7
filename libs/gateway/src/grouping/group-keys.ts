import { GLOBAL_SCOPE, type StateKey } from '@sluice/state';

/*
 * State keys and job names of event grouping. Everything of one group lives in its namespace+
 * tenant scope (one Redis Cluster slot), so the record, its list summary and a flush's outbox are
 * written by one compareAndSwapWith. Only the locator (group_key → scope, for the by-key
 * endpoints) is global; it is a pure function of the key, so writing it twice is harmless.
 */

/** Durable BullMQ queue names: never rename. */
export const GROUP_FLUSH_KIND = 'group-flush';
export const GROUP_SWEEP_KIND = 'group-sweep';
export const GROUP_SWEEP_SCHEDULE_ID = 'group-sweeper';

/** Kind of the plain summary values that GET /v1/groups scans. */
export const GROUP_SUMMARY_KIND = 'group-summary';

export interface GroupScope {
  namespace: string;
  tenant: string;
}

/** The group record: a versioned value, written only by compare-and-swap. */
export function groupRecordKey(scope: GroupScope, groupKey: string): StateKey {
  return { kind: 'group', namespace: scope.namespace, tenant: scope.tenant, id: groupKey };
}

/** The list entry mirrored from the record in the same atomic write. */
export function groupSummaryKey(scope: GroupScope, groupKey: string): StateKey {
  return { kind: GROUP_SUMMARY_KIND, namespace: scope.namespace, tenant: scope.tenant, id: groupKey };
}

/** The key kind of flush outboxes: the memory backend lets their writes into its drain reserve. */
export const GROUP_OUTBOX_KIND = 'group-outbox';

/** The notification a claimed flush owes (written by the claim, marked sent by the delivery). */
export function outboxKey(scope: GroupScope, flushId: string): StateKey {
  return { kind: GROUP_OUTBOX_KIND, namespace: scope.namespace, tenant: scope.tenant, id: flushId };
}

/** Held (set-if-absent, with expiry) by whoever is calling the provider for a flush. */
export function deliveryLeaseKey(scope: GroupScope, flushId: string): StateKey {
  return { kind: 'group-lease', namespace: scope.namespace, tenant: scope.tenant, id: flushId };
}

/** group_key → its namespace and tenant, for GET/DELETE /v1/groups/{group_key}. */
export function locatorKey(groupKey: string): StateKey {
  return { kind: 'group-locator', ...GLOBAL_SCOPE, id: groupKey };
}

/** What a flush job carries: which group, and which of its cycles. */
export interface FlushJobData extends GroupScope {
  group_key: string;
  group_id: string;
  cycle: number;
}

/**
 * One id per (group, cycle): every replica that plans the same flush enqueues the same job, and
 * the claim, outbox, lease and the notification's action id all derive from it. group_id is in
 * it because a new group under the same key starts again at cycle 1.
 */
export function flushId(job: Pick<FlushJobData, 'group_key' | 'group_id' | 'cycle'>): string {
  return `${job.group_key}:${job.group_id}:${job.cycle}`;
}
