import { QuotaPolicy, type Clock } from '@sluice/core';
import type { RecordRepository, StateStore, SyncLog } from '@sluice/state';
import { policyRecords } from '../policies/policy-records.js';
import { QUOTA_POLICY_KIND } from './quota-keys.js';

export interface QuotaRecordsDeps {
  state: StateStore;
  clock: Clock;
  log: SyncLog;
  /** How often replicas poll the generation behind pub/sub (default 5 s). */
  syncIntervalMs?: number | undefined;
  /** Rebuilds this replica's copy after any replica's write. */
  reload(): Promise<void>;
}

/** API-created quota policies, shared by every replica: one per (namespace, tenant) pair, ids unique. */
export function quotaRecords(deps: QuotaRecordsDeps): RecordRepository<QuotaPolicy> {
  return policyRecords({ ...deps, kind: QUOTA_POLICY_KIND, label: 'quota policy', schema: QuotaPolicy, syncIntervalMs: deps.syncIntervalMs ?? 5000 });
}
