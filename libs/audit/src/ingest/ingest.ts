import type { AuditRecord } from '@sluice/core';
import type { BulkWriteOp } from '@sluice/state';
import { intentIndexKey } from '../keys.js';
import { globalIndexWrites, tenantIndexWrites } from '../record-writes.js';

/** Something kept up to date from every record (analytics and coverage rollups). */
export interface AuditObserver {
  writesFor(record: AuditRecord): readonly BulkWriteOp[];
}

/** What append hands the ingest: the stored record and what its indexing needs. */
export interface IngestEntry {
  record: AuditRecord;
  scopeCode: string;
  /** The hash chain's compare-and-swap already wrote the value (and the tenant indexes). */
  valueWritten: boolean;
  /** The intent of its provider call: removed when the record is indexed (action-intents.ts). */
  intent: string | undefined;
}

/**
 * How a record gets from the request path into the indexes: the request path makes it durable
 * and findable by action id at once, and queues it; indexes, analytics and coverage rollups are
 * built later, in bulk (memory-ingest.ts in one process, log-ingest.ts through a shared log).
 */
export interface AuditIngest {
  /** Request path: resolves once the record is stored and findable by id, its indexing queued. */
  append(entry: IngestEntry): Promise<void>;
  /** Indexes everything appended before the call; readers of indexes and rollups call it first. */
  catchUp(): Promise<void>;
  /** Stops background work; what this process queued is indexed first where it can be. */
  close(): Promise<void>;
}

/** After each batch: records indexed, writes that failed, and records still waiting (as this process sees it). */
export interface IngestReport {
  indexed: number;
  failedWrites: number;
  backlog: number;
}

/** One record to index: null when its value is gone (reaped or evicted before it was indexed). */
export interface IndexItem {
  record: AuditRecord | null;
  scopeCode: string;
  intent: string | undefined;
}

/**
 * The bulk writes of many records: their tenant, chain, global and expiry index entries, the
 * observers' rollups, and the removal of their intents. All idempotent except the rollup
 * counters, which the log ingest applies exactly once (StateStore.logGroupAckWith).
 */
export function indexWritesOf(items: readonly IndexItem[], observers: readonly AuditObserver[]): BulkWriteOp[] {
  const writes: BulkWriteOp[] = [];
  for (const { record, scopeCode, intent } of items) {
    if (record !== null) {
      for (const w of tenantIndexWrites(record)) writes.push(w);
      for (const w of globalIndexWrites(record, scopeCode)) writes.push(w);
      for (const observer of observers) for (const w of observer.writesFor(record)) writes.push(w);
    }
    if (intent !== undefined) writes.push({ op: 'indexRemove', index: intentIndexKey(), member: intent });
  }
  return writes;
}
