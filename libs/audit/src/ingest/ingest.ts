import { AuditFilterFields, type AuditFilterField, type AuditRecord } from '@sluice/core';
import type { BulkWriteOp, StateKey, WriteOp } from '@sluice/state';
import { placementOf } from '../index-layout.js';
import { intentIndexOf, intentIndexes } from '../keys.js';
import { memberScopeCode } from '../record-ref.js';
import { addGlobalIndexWrites, addTenantIndexWrites } from '../record-writes.js';

/** What indexing reads of a record: its id, times, chain position and filter fields (not the payload). */
export type IndexedRecord = Pick<AuditRecord, 'id' | 'dispatched_at' | 'expires_at' | 'sequence_number' | 'duration_ms' | AuditFilterField>;

/** Something kept up to date from every record (analytics and coverage rollups). */
export interface AuditObserver {
  writesFor(record: IndexedRecord): readonly BulkWriteOp[];
}

/**
 * Where records go once ingested when the state store is only their way in (the PostgreSQL
 * trail): the state holds a record, findable by id, until the sink has it, then lets it go.
 */
export interface RecordSink {
  /**
   * Stores the records, given as their stored JSON (the sink reads what it needs from it, so
   * the ingest parses nothing) or, in one process, as the records themselves; one stored before
   * (a batch delivered again after a crash) is kept once. Rejects when the sink is away (the batch is retried until it answers); resolves
   * with the ids of records it refuses for what they hold (never storable: they stay where they
   * are, reported).
   */
  store(records: readonly StoredRecord[]): Promise<ReadonlySet<string>>;
}

/** A record as the state store keeps it: its id, and its JSON (record-codec.ts); in one process, the record itself (never encoded). */
export type StoredRecord = { id: string; json: string } | { id: string; record: AuditRecord };

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
  /** Indexes everything appended before the call (readers of indexes and rollups call it first); false when it gave up waiting. */
  catchUp(): Promise<boolean>;
  /** Records stored and not yet indexed, read now (the log's length; in one process, its queue's). */
  backlog(): Promise<number>;
  /** Stops background work; what this process queued is indexed first where it can be. */
  close(): Promise<void>;
}

/** After each batch: records indexed, and writes that failed. (What still waits is read at each scrape: AuditIngest.backlog.) */
export interface IngestReport {
  indexed: number;
  failedWrites: number;
}

/** One record to index: null when its message could not be read. */
export interface IndexItem {
  record: IndexedRecord | null;
  scopeCode: string;
  intent: string | undefined;
  /** Its action id (its pointer is removed when it leaves for a sink); null in messages of older writers. */
  actionId?: string | null;
}

/**
 * The bulk writes of many records: their tenant, chain, global and expiry index entries (unless
 * the records leave the state for a sink, which indexes them itself), the observers' rollups,
 * and the removal of their intents. All idempotent except the rollup counters, which the log
 * ingest applies exactly once (StateStore.logGroupAckWith).
 */
export function indexWritesOf(items: readonly IndexItem[], observers: readonly AuditObserver[], recordIndexes = true, sharded = false): BulkWriteOp[] {
  const writes: BulkWriteOp[] = [];
  for (const item of items) addIndexWrites(writes, item, observers, recordIndexes, sharded);
  return writes;
}

/** One item's writes of indexWritesOf, appended to `into`. */
export function addIndexWrites(into: BulkWriteOp[], item: IndexItem, observers: readonly AuditObserver[], recordIndexes: boolean, sharded = false): void {
  const { record, scopeCode, intent, actionId } = item;
  if (record !== null) {
    if (recordIndexes) {
      const placement = placementOf(record, sharded);
      addTenantIndexWrites(into, record, placement);
      addGlobalIndexWrites(into, record, scopeCode, placement);
    }
    for (const observer of observers) for (const w of observer.writesFor(record)) into.push(w);
  }
  if (intent === undefined) return;
  // On a sharded state, an intent whose action the message does not name (an older writer's) may be in any shard.
  const indexes = actionId === undefined || actionId === null ? intentIndexes(sharded) : [intentIndexOf(actionId, sharded)];
  for (const index of indexes) into.push({ op: 'indexRemove', index, member: intent });
}

/**
 * The same writes with the increments of each counter summed into one (its first TTL kept) and
 * placed first, the index writes after in their order, appended to `into`: a batch of records of
 * one hour touches each rollup counter once.
 */
export function addSummedCounters(into: WriteOp[], writes: readonly BulkWriteOp[]): void {
  const counters = new Map<string, Extract<BulkWriteOp, { op: 'increment' }>>();
  for (const w of writes) {
    if (w.op !== 'increment') continue;
    const name = keyName(w.key);
    const seen = counters.get(name);
    if (seen === undefined) counters.set(name, { ...w });
    else seen.by += w.by;
  }
  for (const w of counters.values()) into.push(w);
  for (const w of writes) if (w.op !== 'increment') into.push(w);
}

/** Names of shared keys (shareKey freezes them, so a name cannot go stale): built once, not per write. */
const sharedNames = new WeakMap<StateKey, string>();

/** A key's identity as one string (its fields cannot contain NUL). */
export function keyName(key: StateKey): string {
  const known = sharedNames.get(key);
  if (known !== undefined) return known;
  const name = `${key.kind}\u0000${key.namespace}\u0000${key.tenant}\u0000${key.id}`;
  if (Object.isFrozen(key)) sharedNames.set(key, name);
  return name;
}

/** The message format's version: a consumer leaves a message of a newer one pending for a consumer that reads it. */
const MESSAGE_VERSION = 1;
/** Version, member, intent, id, dispatched_at, expires_at, sequence_number, duration_ms; then the filter fields, then the action id. */
const FIXED_FIELDS = 8;
const ACTION_ID_FIELD = FIXED_FIELDS + AuditFilterFields.length;

/**
 * The ingest message of a record on a shared log: its global member, the intent to remove, and
 * the fields indexing reads, as one JSON array (positional, so small): the indexer needs
 * neither the record's value nor a lookup of its scope. Fields added later go at the end (the
 * action id was): a reader takes the ones it knows, and a missing one as null.
 */
export function encodeIndexMessage(record: IndexedRecord & Pick<AuditRecord, 'action_id'>, member: string, intent: string | undefined): string {
  const fields: unknown[] = [
    MESSAGE_VERSION,
    member,
    intent ?? null,
    record.id,
    record.dispatched_at,
    record.expires_at,
    record.sequence_number,
    record.duration_ms,
  ];
  for (const field of AuditFilterFields) fields.push(record[field]);
  fields.push(record.action_id);
  return JSON.stringify(fields);
}

/**
 * What a message asks to index: its record null when its fields cannot be read (its intent is
 * still removed); null when nothing can be read; 'newer' for a format this code does not know.
 */
export function decodeIndexMessage(message: string): IndexItem | 'newer' | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || typeof parsed[0] !== 'number' || typeof parsed[1] !== 'string') return null;
  if (parsed[0] > MESSAGE_VERSION) return 'newer';
  const [, member, intent, id, dispatched_at, expires_at, sequence_number, duration_ms] = parsed as [number, string, ...unknown[]];
  const text = (v: unknown) => (typeof v === 'string' ? v : null);
  const item: IndexItem = { record: null, scopeCode: memberScopeCode(member), intent: text(intent) ?? undefined, actionId: text(parsed[ACTION_ID_FIELD]) };
  if (typeof id !== 'string' || typeof dispatched_at !== 'string' || typeof duration_ms !== 'number') return item;
  const record: Record<string, unknown> = {
    id,
    dispatched_at,
    expires_at: text(expires_at),
    sequence_number: typeof sequence_number === 'number' ? sequence_number : null,
    duration_ms,
  };
  AuditFilterFields.forEach((field, i) => {
    record[field] = text(parsed[FIXED_FIELDS + i]);
  });
  item.record = record as IndexedRecord;
  return item;
}
