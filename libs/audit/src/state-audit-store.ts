import {
  isoString,
  systemClock,
  type AuditPage,
  type AuditRecord,
  type AuditVerifyInput,
  type AuditVerifyResult,
  type Clock,
  type NewAuditRecord,
} from '@sluice/core';
import type { IndexEntry, StateStore } from '@sluice/state';
import { runQuery } from './audit-query.js';
import type { AppendOptions, AuditVisibility, IngestingAuditStore, StoreQuery } from './audit-store.js';
import { verifyChain } from './chain-verifier.js';
import { linkIntoChain } from './hash-chain.js';
import { expiryIndexes } from './index-layout.js';
import type { AuditIngest, AuditObserver, IngestReport, RecordSink } from './ingest/ingest.js';
import { ShardedLogIngest } from './ingest/sharded-log-ingest.js';
import { LogAuditIngest } from './ingest/log-ingest.js';
import { MemoryAuditIngest } from './ingest/memory-ingest.js';
import { actionPointerKey, globalIndexKey, KIND } from './keys.js';
import { isExpired } from './record-codec.js';
import { RecordIdGenerator } from './record-id.js';
import { RecordReader } from './record-reader.js';
import { reapMembers } from './record-reaper.js';
import { addTenantIndexWrites, valueWrite } from './record-writes.js';
import { ScopeCodes } from './scope-codes.js';

export interface StateAuditStoreOptions {
  /** Decides when a record has expired (queries hide it) and when pointers expire; default: system clock. */
  clock?: Clock;
  /** Memory backend only: above this many records the oldest are evicted (ignored on Redis). */
  maxRecords?: number;
  /** Memory backend only: above this many characters of stored records (their JSON) the oldest are evicted. */
  maxBytes?: number;
  /** Told how many records each eviction removed. */
  onEvicted?: (count: number) => void;
  /** Index entries one query may examine before it returns a short page with a cursor (default 20 000). */
  scanBudget?: number;
  /** Kept up to date from every record as it is indexed (analytics and coverage rollups). */
  observers?: readonly AuditObserver[];
  /**
   * Records move there once ingested (the PostgreSQL trail), and the state keeps only those not
   * yet moved, findable by get(): no index entries, so query, verify and expire see nothing —
   * the sink's owner answers them. The rollups stay in the state.
   */
  sink?: RecordSink;
  /** Shared state only: records indexed per batch, and how long a batch may stay with a silent consumer. */
  ingest?: { batchSize?: number; claimIdleMs?: number; forgetIdleAfterMs?: number };
  /** After each indexed batch. */
  onIndexed?: (report: IngestReport) => void;
  /** Indexing failed (a batch is retried: nothing is lost). */
  onIndexError?: (err: unknown) => void;
  /** Immutable audit: no record kept for good may have left a hash chain, so verify requires them all (VerifyOptions.complete). */
  completeChains?: boolean;
}

/**
 * The audit store on StateStore primitives, so the memory and Redis backends run the same code.
 * Layout in keys.ts; what a record is indexed under in index-layout.ts.
 */
/** Pointer entries of one id read per round trip, newest first (their scopes are checked before records are read). */
const POINTER_PAGE = 1000;
/**
 * Pointer entries of one id a lookup reads at most: a bound on one request's work, far above what
 * reuse of an id by other tenants reaches within a retention period.
 */
const MAX_POINTER_ENTRIES = 100_000;
/** Records read per round trip while looking for a visible one, newest first. */
const READ_BATCH = 16;

/**
 * The record of a draft, unchained, as one object literal in the schema's field order (the id
 * first): one allocation and one shape for every record. Copying the draft with Object.assign
 * and adding the id and chain fields grew the copy's property store field by field, ~3 KiB per
 * dispatch. A draft's own `id` is ignored.
 */
function storedRecord(draft: NewAuditRecord, id: string, expiresAt: string | null): AuditRecord {
  const record: AuditRecord = {
    id,
    action_id: draft.action_id,
    chain_id: draft.chain_id,
    trace_id: draft.trace_id,
    namespace: draft.namespace,
    tenant: draft.tenant,
    provider: draft.provider,
    action_type: draft.action_type,
    verdict: draft.verdict,
    matched_rule: draft.matched_rule,
    outcome: draft.outcome,
    action_payload: draft.action_payload,
    verdict_details: draft.verdict_details,
    outcome_details: draft.outcome_details,
    metadata: draft.metadata,
    dispatched_at: draft.dispatched_at,
    completed_at: draft.completed_at,
    duration_ms: draft.duration_ms,
    expires_at: expiresAt,
    caller_id: draft.caller_id,
    auth_method: draft.auth_method,
    sequence_number: null,
    previous_hash: null,
    record_hash: null,
  };
  if (draft.silence_comment !== undefined) record.silence_comment = draft.silence_comment;
  return record;
}

export class StateAuditStore implements IngestingAuditStore {
  private readonly clock: Clock;
  private readonly completeChains: boolean;
  private readonly ids = new RecordIdGenerator();
  private readonly scopes: ScopeCodes;
  private readonly reader: RecordReader;
  private readonly maxRecords: number | null;
  private readonly maxBytes: number | null;
  private readonly onEvicted: (count: number) => void;
  private readonly scanBudget: number | undefined;
  private readonly ingest: AuditIngest;
  /** The shared-state ingest, whose indexer loop worker processes run; null in memory. */
  private readonly logIngest: LogAuditIngest | ShardedLogIngest | null;
  /** The one-process ingest, whose queue get() also looks in; null on shared state. */
  private readonly memoryIngest: MemoryAuditIngest | null;
  private readonly sinking: boolean;

  constructor(
    private readonly store: StateStore,
    opts: StateAuditStoreOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock;
    this.completeChains = opts.completeChains === true;
    this.scopes = new ScopeCodes(store);
    this.reader = new RecordReader(store, this.scopes);
    this.maxRecords = store.backend === 'memory' && opts.maxRecords !== undefined ? opts.maxRecords : null;
    this.maxBytes = store.storedBytes !== undefined && opts.maxBytes !== undefined ? opts.maxBytes : null;
    this.onEvicted = opts.onEvicted ?? (() => {});
    this.scanBudget = opts.scanBudget;
    const observers = opts.observers ?? [];
    const reports = {
      ...(opts.onIndexError ? { onError: opts.onIndexError } : {}),
      ...(opts.onIndexed ? { onIndexed: opts.onIndexed } : {}),
    };
    this.sinking = opts.sink !== undefined;
    if (store.backend === 'memory') {
      this.logIngest = null;
      this.memoryIngest = new MemoryAuditIngest(store, {
        observers,
        sink: opts.sink,
        afterFlush: () => this.evictBeyondCaps(),
        ...reports,
      });
      this.ingest = this.memoryIngest;
    } else {
      this.memoryIngest = null;
      const logOptions = { observers, sink: opts.sink, ...opts.ingest, ...reports };
      // On a Redis Cluster the ingest log is split over several slots (docs/cluster.md#redis-cluster).
      this.logIngest = store.sharded ? new ShardedLogIngest(store, logOptions) : new LogAuditIngest(store, logOptions);
      this.ingest = this.logIngest;
    }
  }

  ingestBacklog(): Promise<number> {
    return this.ingest.backlog();
  }

  /** Starts indexing in the background (processes that consume jobs): shared state only, memory indexes on its own. */
  startIndexer(): void {
    this.logIngest?.start();
  }

  /** Indexes what was appended before the call (readers of the rollups call it first); false when it gave up waiting. */
  catchUp(): Promise<boolean> {
    return this.ingest.catchUp();
  }

  /** Stops the indexer; in memory, writes what is still queued. */
  close(): Promise<void> {
    return this.ingest.close();
  }

  /**
   * Assigns the record id (time-sortable, see record-id.ts) and expires_at (dispatched_at +
   * ttlMs), links the record into its chain when asked, and resolves once every write is applied.
   */
  async append(draft: NewAuditRecord, opts: AppendOptions): Promise<AuditRecord> {
    const dispatchedMs = Date.parse(draft.dispatched_at);
    if (Number.isNaN(dispatchedMs)) throw new Error(`audit record of ${draft.action_id}: dispatched_at is not a timestamp`);
    const expiresAt = opts.ttlMs === null ? null : isoString(dispatchedMs + opts.ttlMs);
    const unlinked = storedRecord(draft, this.ids.next(dispatchedMs), expiresAt);
    const scopeCode = await this.scopes.codeFor(unlinked);
    if (opts.chain) {
      // The value and tenant indexes join the head's CAS (one slot), so verify sees every link
      // (with a sink, the value only: the sink indexes what it stores).
      const record = await linkIntoChain(this.store, unlinked, (linked) => {
        const writes = [valueWrite(linked)];
        if (!this.sinking) addTenantIndexWrites(writes, linked);
        return writes;
      });
      await this.ingest.append({ record, scopeCode, valueWritten: true, intent: opts.intent });
      return record;
    }
    await this.ingest.append({ record: unlinked, scopeCode, valueWritten: false, intent: opts.intent });
    return unlinked;
  }

  async get(actionId: string, visible: AuditVisibility = {}): Promise<AuditRecord | null> {
    const now = this.clock.now();
    const findable = (r: AuditRecord | null | undefined): r is AuditRecord =>
      r != null && r.action_id === actionId && !isExpired(r, now) && (visible.scope?.(r) ?? true) && (visible.record?.(r) ?? true);
    // On shared state the pointer is written on the request path; in memory it waits in the
    // queue, flushed here (what a sink refused stays queued, and is found there).
    if (this.memoryIngest !== null) {
      await this.memoryIngest.catchUp();
      const queued = this.memoryIngest.queued(actionId).find(findable);
      if (queued !== undefined) return queued;
    }
    // Newest first: one entry per record of this id, in whichever tenants dispatched it. Entries
    // of scopes the caller cannot see are dropped before any record is read, and the pointer is
    // paged until a findable record turns up, so however often another tenant reuses the id, it
    // cannot push the caller's own record out of reach.
    const pointer = actionPointerKey(actionId);
    let page = { max: undefined as number | undefined, skip: 0 };
    for (let read = 0; read < MAX_POINTER_ENTRIES; read += POINTER_PAGE) {
      const entries = await this.store.indexRange(pointer, { rev: true, max: page.max, offset: page.skip, limit: POINTER_PAGE });
      const refs = await this.reader.refsOf(
        entries.map((e) => e.member),
        null,
      );
      const seen = refs.filter((ref) => ref !== null && (visible.scope?.(ref) ?? true));
      for (let at = 0; at < seen.length; at += READ_BATCH) {
        const found = (await this.reader.readRefs(seen.slice(at, at + READ_BATCH))).find(findable);
        if (found) return found;
      }
      if (entries.length < POINTER_PAGE) return null;
      page = nextPointerPage(page, entries);
    }
    return null;
  }

  async query(query: StoreQuery): Promise<AuditPage> {
    await this.ingest.catchUp();
    return runQuery({ store: this.store, reader: this.reader, nowMs: this.clock.now(), scanBudget: this.scanBudget }, query);
  }

  async verify(input: AuditVerifyInput): Promise<AuditVerifyResult> {
    await this.ingest.catchUp();
    return verifyChain(this.store, this.reader, input, { complete: this.completeChains });
  }

  /**
   * Removes up to `limit` records whose expires_at is at or before nowMs; returns how many.
   * Due entries are read, not popped: each leaves the expiry index only after its record is gone,
   * so a reaper killed mid-run loses nothing and the next run (any replica) completes the work.
   */
  async expire(nowMs: number, limit: number): Promise<number> {
    if (limit <= 0) return 0;
    await this.ingest.catchUp();
    // Each shard's due entries (one index unless the state is sharded), then the oldest of them all.
    const shards = await Promise.all(
      expiryIndexes(this.store.sharded).map(async (index) => ({ index, due: await this.store.indexRange(index, { max: nowMs, limit }) })),
    );
    const oldest = shards
      .flatMap(({ index, due }) => due.map((entry) => ({ index, entry })))
      .sort((a, b) => a.entry.score - b.entry.score)
      .slice(0, limit);
    const reaped = await Promise.all(
      shards.map(({ index }) =>
        reapMembers(
          this.store,
          this.reader,
          index,
          oldest.filter((o) => o.index === index).map((o) => o.entry.member),
        ),
      ),
    );
    return reaped.reduce((a, b) => a + b, 0);
  }

  /** The record values' size, as the memory store counts it. */
  storedBytes(): number {
    return this.store.storedBytes?.(KIND.record) ?? 0;
  }

  /** Evicts the oldest records (by dispatched_at) while either cap is exceeded (memory: one global index). */
  private async evictBeyondCaps(): Promise<void> {
    const index = globalIndexKey();
    let evicted = 0;
    if (this.maxRecords !== null) evicted += await this.evictOldest((await this.store.indexCount(index)) - this.maxRecords);
    // Records differ in size: evict the excess over the average size, and again while still above.
    for (let bytes = this.storedBytes(); this.maxBytes !== null && bytes > this.maxBytes; bytes = this.storedBytes()) {
      const count = await this.store.indexCount(index);
      if (count === 0) break; // what is left is not indexed yet: the next flush evicts it
      const removed = await this.evictOldest(Math.max(1, Math.ceil((bytes - this.maxBytes) / (bytes / count))));
      if (removed === 0) break;
      evicted += removed;
    }
    if (evicted > 0) this.onEvicted(evicted);
  }

  /** Deletes the `count` oldest indexed records; returns how many were deleted. */
  private async evictOldest(count: number): Promise<number> {
    if (count <= 0) return 0;
    const index = globalIndexKey();
    const oldest = await this.store.indexRange(index, { limit: count });
    return reapMembers(
      this.store,
      this.reader,
      index,
      oldest.map((e) => e.member),
    );
  }
}

/**
 * Where the next page of a newest-first range starts: at the last score read, past the entries of
 * that score already read. By score, not by offset from the top, so entries added meanwhile (all
 * newer) shift nothing.
 */
function nextPointerPage(page: { max: number | undefined; skip: number }, entries: readonly IndexEntry[]): { max: number; skip: number } {
  const last = entries[entries.length - 1]!.score;
  let atLast = 0;
  for (const entry of entries) if (entry.score === last) atLast++;
  return { max: last, skip: last === page.max ? page.skip + atLast : atLast };
}
