import { RetentionPolicy, type Clock } from '@sluice/core';
import type { RecordRepository, StateStore, SyncLog } from '@sluice/state';
import { policyRecords } from '../policies/policy-records.js';

export interface RetentionRecordsDeps {
  state: StateStore;
  clock: Clock;
  log: SyncLog;
  /** How often replicas poll the generation behind pub/sub (default 5 s). */
  syncIntervalMs?: number | undefined;
  /** Rebuilds this replica's copy after any replica's write. */
  reload(): Promise<void>;
}

/** Retention policies, shared by every replica: one per (namespace, tenant) pair, ids unique. */
export function retentionRecords(deps: RetentionRecordsDeps): RecordRepository<RetentionPolicy> {
  return policyRecords({ ...deps, kind: 'retention-policy', label: 'retention policy', schema: RetentionPolicy, syncIntervalMs: deps.syncIntervalMs ?? 5000 });
}
