import type { StateKey } from '@sluice/state';

/** Key kind of API-created quota policies (a RecordRepository's records). */
export const QUOTA_POLICY_KIND = 'quota-policy';

/**
 * The counter of one policy for one tenant in one window. It lives in the counted tenant's own
 * slot. The window name is part of the id so a policy switched from daily to hourly never reuses
 * the daily counter that starts at midnight.
 */
export function counterKey(policyId: string, window: string, namespace: string, tenant: string, startMs: number): StateKey {
  return { kind: 'quota', namespace, tenant, id: `${policyId}:${window}:${startMs}` };
}
