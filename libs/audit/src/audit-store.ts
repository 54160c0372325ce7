import type { AuditPage, AuditQuery, AuditRecord, AuditVerifyInput, AuditVerifyResult, NewAuditRecord } from '@sluice/core';

export interface AppendOptions {
  /** Record lifetime from dispatched_at; null = kept until deleted (compliance hold, immutable audit). */
  ttlMs: number | null;
  /** Link the record into its (namespace, tenant) hash chain. */
  chain: boolean;
  /** The intent written before the provider call (action-intents.ts): removed when the record is indexed. */
  intent?: string | undefined;
}

/** What a lookup by id may return to its caller: its scopes (checked before reading) and its records. */
export interface AuditVisibility {
  scope?(scope: { namespace: string; tenant: string }): boolean;
  record?(record: AuditRecord): boolean;
}

/** What a query may return to its caller (grants): applied to every record before paging. */
type RecordFilter = (record: AuditRecord) => boolean;

export interface StoreQuery extends Omit<AuditQuery, 'from' | 'to'> {
  /** Epoch ms bounds on dispatched_at, inclusive. */
  fromMs?: number;
  toMs?: number;
  visible?: RecordFilter;
}

/**
 * The audit trail. Built on StateStore primitives only, so it runs unchanged on the memory and
 * Redis backends; one contract suite covers both.
 */
export interface AuditStore {
  /**
   * Stores a record: findable by get() once this resolves; its index entries and rollups are
   * built in bulk shortly after (ingest/), and every query, verify and expire indexes what was
   * appended before it first. Returns the stored record (id, expires_at and chain fields set).
   */
  append(record: NewAuditRecord, opts: AppendOptions): Promise<AuditRecord>;
  /**
   * The most recent record of an action id that `visible` accepts (null when none, or all have
   * expired). Ids are per tenant: the same id dispatched in two tenants is two records, and a
   * caller sees only the ones its grants cover.
   */
  get(actionId: string, visible?: AuditVisibility): Promise<AuditRecord | null>;
  /**
   * Newest first (dispatched_at, then record id). Records past their expires_at are hidden even
   * before expire() removes them. A page may end early, with a next_cursor, when a sparse filter
   * would need too long a scan; `total` is present only when it can be counted exactly from one
   * index (and no cursor or visible predicate is involved).
   */
  query(query: StoreQuery): Promise<AuditPage>;
  /** Walks one (namespace, tenant) chain in sequence order and reports the first broken link. */
  verify(input: AuditVerifyInput): Promise<AuditVerifyResult>;
  /** Deletes up to `limit` records whose expires_at is at or before `nowMs`, with their index entries; returns how many. */
  expire(nowMs: number, limit: number): Promise<number>;
}

/** An audit store whose records are indexed (or moved) by an ingest running beside it. */
export interface IngestingAuditStore extends AuditStore {
  /** Starts the ingest's background loop (processes that consume jobs). */
  startIndexer(): void;
  /** Ingests what was appended before the call; false when it gave up waiting. */
  catchUp(): Promise<boolean>;
  /** Records stored and not yet ingested, read now (sluice_audit_ingest_backlog). */
  ingestBacklog(): Promise<number>;
  /** Stops the ingest; what this process queued is written first where it can be. */
  close(): Promise<void>;
}
