/* Job names of recurring actions; their records live in a RecordRepository (recurring-records.ts). */

/** The job kind (a durable BullMQ queue name: never rename) whose handler fires occurrences. */
export const RECURRING_FIRE_KIND = 'recurring-fire';

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
