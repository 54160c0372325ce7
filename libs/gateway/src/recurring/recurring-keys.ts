import type { StateKey } from '@sluice/state';

/*
 * State keys and job names of recurring actions. Everything of one action lives in its
 * (namespace, tenant) scope, so the record and its directory entry share one Redis Cluster slot
 * and can be written by one compareAndSwapWith.
 */

/** The job kind (a durable BullMQ queue name: never rename) whose handler fires occurrences. */
export const RECURRING_FIRE_KIND = 'recurring-fire';

/** Versioned value: the record JSON. Its version is the per-occurrence claim (see occurrence.ts). */
export function recordKey(namespace: string, tenant: string, id: string): StateKey {
  return { kind: 'recurring', namespace, tenant, id };
}

export const DIRECTORY_KIND = 'recurring-dir';

/** Plain value: lists the record for the cross-tenant scan a worker runs on start (scan reads plain values only). */
export function directoryKey(namespace: string, tenant: string, id: string): StateKey {
  return { kind: DIRECTORY_KIND, namespace, tenant, id };
}

/** Versioned value: the pair's ids in creation order; its compare-and-swap enforces the per-tenant maximum. */
export function rosterKey(namespace: string, tenant: string): StateKey {
  return { kind: 'recurring-roster', namespace, tenant, id: 'ids' };
}

/** The Scheduler schedule (and job data) of one action. Ids are server-made UUIDs, unique across pairs. */
export function scheduleId(id: string): string {
  return `recurring:${id}`;
}

export interface FireJobData {
  namespace: string;
  tenant: string;
  id: string;
}

export function isFireJobData(data: unknown): data is FireJobData {
  if (typeof data !== 'object' || data === null) return false;
  const d = data as Record<string, unknown>;
  return typeof d.namespace === 'string' && typeof d.tenant === 'string' && typeof d.id === 'string';
}
