import type { Clock } from '@sluice/core';
import { decodeWith, type RecordSchema } from './schema-decoder.js';
import { RecordRepository, type RecordValue, type StateStore, type SyncLog } from '@sluice/state';

export interface PolicyRecordsOptions<T> {
  state: StateStore;
  clock: Clock;
  /** Key kind of the records. */
  kind: string;
  /** What they are called in messages ("quota policy"). */
  label: string;
  schema: RecordSchema<T>;
  /** How often replicas poll the generation behind pub/sub. */
  syncIntervalMs: number;
  log: SyncLog;
  /** Rebuilds this replica's copy (see RecordRepositoryOptions.sync). */
  reload(): Promise<void>;
}

/** The unique name every policy of a pair shares, so a pair holds at most one. */
const ONE_PER_PAIR = 'policy';

/**
 * Records of policies that each govern one (namespace, tenant) pair (quota and retention
 * policies): ids unique across pairs, at most one policy per pair, and a copy on every replica
 * (the repository's sync), since they are looked up on the dispatch path.
 */
export function policyRecords<T extends RecordValue>(opts: PolicyRecordsOptions<T>): RecordRepository<T> {
  return new RecordRepository<T>({
    state: opts.state,
    clock: opts.clock,
    kind: opts.kind,
    label: opts.label,
    decode: decodeWith(opts.schema),
    globalIds: true,
    uniqueName: () => ONE_PER_PAIR,
    sync: { intervalMs: opts.syncIntervalMs, log: opts.log, reload: opts.reload },
  });
}
