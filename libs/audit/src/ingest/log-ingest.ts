import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { compareLogIds, type BulkWriteOp, type LogDelivery, type StateKey, type StateStore, type WriteOp } from '@sluice/state';
import { actionPointerKey, ingestLogKey, recordKey } from '../keys.js';
import { decodeRecord } from '../record-codec.js';
import { globalMember } from '../record-ref.js';
import { pointerWrite, valueWrite } from '../record-writes.js';
import {
  decodeIndexMessage,
  encodeIndexMessage,
  indexWritesOf,
  keyName,
  type AuditIngest,
  type AuditObserver,
  type IndexedRecord,
  type IndexItem,
  type IngestEntry,
  type IngestReport,
  type RecordSink,
} from './ingest.js';

/** The ingest logs' consumer group (a durable name: never rename without a migration). */
const INGEST_GROUP = 'indexer';

export interface LogIngestOptions {
  observers: readonly AuditObserver[];
  /** The log this ingest appends to and consumes (default: the one global log; one shard of a sharded ingest). */
  log?: StateKey;
  /** Pause of the indexer loop when the log is empty (default 20 ms). */
  idlePollMs?: number;
  /** Records move there, and out of the state store, instead of being indexed in it. */
  sink?: RecordSink | undefined;
  /** Messages indexed per batch (default 500). */
  batchSize?: number;
  /** A message pending this long is taken over from its consumer, presumed dead (default 10 s). */
  claimIdleMs?: number;
  /** How long catchUp works or waits before it gives up (default 5 s). */
  catchUpTimeoutMs?: number;
  /** A consumer holding nothing, idle this long, is forgotten by the indexer loops (default 5 min). */
  forgetIdleAfterMs?: number;
  onIndexed?: (report: IngestReport) => void;
  onError?: (err: unknown) => void;
}

/**
 * Deliveries after which a message that keeps failing is acknowledged without its writes. Not
 * with a sink: there a batch fails only while the sink is away (it refuses bad records itself),
 * and giving up would lose records.
 */
const MAX_DELIVERIES = 5;
/** How often a busy consumer looks for messages a dead one left pending. */
const CLAIM_EVERY_MS = 1000;
/** How long close() tries to forget this process's consumers before it lets them be. */
const CLOSE_CLEANUP_MS = 1000;
/** Pause of the indexer loop when the log is empty. */
const IDLE_POLL_MS = 20;
/**
 * A consumer holding nothing, idle this long, is forgotten: one of a process killed before its
 * close() could forget it (every restart would leave two names). A live one reads again under it.
 */
const FORGET_IDLE_AFTER_MS = 5 * 60_000;
/** How often an indexer loop forgets such consumers (at most). */
const FORGET_IDLE_EVERY_MS = 60_000;

/** A batch's messages, sorted: what to index, what to acknowledge without writes, what to leave. */
interface SortedBatch {
  /** Acknowledged with the counters: indexed, or given up on (reported, and counted in `givenUp`). */
  ack: string[];
  givenUp: number;
  writes: BulkWriteOp[];
  /** Per acknowledged message, its own writes (the fallback, when the batch as a whole is refused, takes their counters). */
  byMessage: Map<string, BulkWriteOp[]>;
  /** The readable messages' records (moved to the sink, when there is one). */
  items: IndexItem[];
}

/**
 * The shared-state ingest (Redis). The request path writes the record, its action pointer and a
 * message carrying the fields indexing reads (and the intent to remove) to the ingest log, in
 * one pipeline. Consumers of one group — the indexer loop of every worker process, and any
 * process that reads the indexes (catchUp) — read batches of messages and write the batch's
 * index entries (idempotent) as plain commands grouped by key, then its rollup counters,
 * summed, together with the batch's acknowledgement (StateStore.logGroupAckWith): a consumer
 * that dies mid-batch has its messages handed to another, and a batch handed out twice has its
 * counters applied once.
 */
export class LogAuditIngest implements AuditIngest {
  private readonly log: StateKey;
  private readonly idlePollMs: number;
  private readonly batchSize: number;
  private readonly claimIdleMs: number;
  private readonly catchUpTimeoutMs: number;
  private readonly forgetIdleAfterMs: number;
  /** Consumer names of this process: one for its indexer loop, one for its catch-ups (a claim between them must change owner). */
  private readonly consumers: { loop: string; reader: string };
  private groupReady: Promise<void> | null = null;
  private lastClaimAt = 0;
  private loop: Promise<void> | null = null;
  private closed = false;
  /** The catch-up running, and the one queued behind it (which every caller arriving meanwhile shares). */
  private running: Promise<boolean> | null = null;
  private next: Promise<boolean> | null = null;

  constructor(
    private readonly store: StateStore,
    private readonly opts: LogIngestOptions,
  ) {
    this.log = opts.log ?? ingestLogKey();
    this.idlePollMs = opts.idlePollMs ?? IDLE_POLL_MS;
    this.batchSize = opts.batchSize ?? 500;
    this.claimIdleMs = opts.claimIdleMs ?? 10_000;
    this.catchUpTimeoutMs = opts.catchUpTimeoutMs ?? 5000;
    this.forgetIdleAfterMs = opts.forgetIdleAfterMs ?? FORGET_IDLE_AFTER_MS;
    // Host and pid say which process holds a batch (XINFO CONSUMERS); the random part keeps a
    // restarted process (same host, pid 1 in a container) from passing for the dead one.
    const base = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.consumers = { loop: `${base}-loop`, reader: `${base}-read` };
  }

  async append({ record, scopeCode, valueWritten, intent }: IngestEntry): Promise<void> {
    const message = encodeIndexMessage(record, globalMember(record.id, scopeCode), intent);
    const writes: WriteOp[] = valueWritten ? [pointerWrite(record, scopeCode)] : [valueWrite(record), pointerWrite(record, scopeCode)];
    await this.store.writeBatch(writes, { append: { log: this.log, message } });
  }

  /**
   * Indexes every message appended before the call; true when done, false when it gave up after
   * catchUpTimeoutMs (the indexes are then read as they are). Concurrent calls share runs: one
   * runs, and every call arriving meanwhile waits for the next, which starts after it.
   */
  catchUp(): Promise<boolean> {
    if (this.running === null) {
      const run = this.catchUpOnce().finally(() => {
        if (this.running === run) this.running = null;
      });
      this.running = run;
      return run;
    }
    // A run that started before this call may have read its target before this caller's record
    // was appended: wait for it, then run once more for everyone who arrived meanwhile.
    this.next ??= this.running
      .catch(() => false)
      .then(() => {
        this.next = null;
        return this.catchUp();
      });
    return this.next;
  }

  /**
   * Reads undelivered messages itself, and waits for batches other consumers hold (taking over
   * those idle past claimIdleMs). Acknowledged messages leave the log, so "the oldest message
   * still there is newer than the last one at the start" means done.
   */
  private async catchUpOnce(): Promise<boolean> {
    const target = await this.store.logLastId(this.log);
    if (target === null) return true;
    const deadline = Date.now() + this.catchUpTimeoutMs;
    for (;;) {
      const [oldest] = await this.store.logRange(this.log, { limit: 1 });
      if (oldest === undefined || compareLogIds(oldest.id, target) > 0) return true;
      if (Date.now() > deadline) return false;
      if ((await this.indexOnce(this.consumers.reader)) === 0) await sleep(5);
    }
  }

  backlog(): Promise<number> {
    return this.store.logLength(this.log);
  }

  /** Starts this process's indexer loop (worker processes): until close(). */
  start(): void {
    this.loop ??= this.runLoop();
  }

  /**
   * Stops the loop, and forgets this process's consumers in the group (each only if it holds
   * nothing: a batch left pending is taken over by another consumer), so restarts do not pile
   * up names. Best effort, and bounded: with the backend away it is not tried, and with one that
   * stalls (its connection open) each step is given up after a second rather than a command timeout.
   */
  async close(): Promise<void> {
    this.closed = true;
    // A round waiting on a stalled Redis ends with its command timeout; its batch stays pending
    // for another consumer whether or not this process waits for it.
    const rounds = Promise.all([this.loop, this.next?.catch(() => false), this.running?.catch(() => false)]);
    await Promise.race([rounds, sleep(CLOSE_CLEANUP_MS, undefined, { ref: false })]);
    if (this.groupReady === null || !this.store.available()) return;
    const forget = Promise.all(
      [this.consumers.loop, this.consumers.reader].map((consumer) =>
        this.store.logGroupRemoveConsumer(this.log, INGEST_GROUP, consumer).catch((err: unknown) => this.opts.onError?.(err)),
      ),
    );
    await Promise.race([forget, sleep(CLOSE_CLEANUP_MS, undefined, { ref: false })]);
  }

  private async runLoop(): Promise<void> {
    let forgotAt = Date.now();
    while (!this.closed) {
      try {
        if (Date.now() - forgotAt >= Math.min(FORGET_IDLE_EVERY_MS, this.forgetIdleAfterMs) && this.groupReady !== null) {
          forgotAt = Date.now();
          await this.store.logGroupForgetIdle(this.log, INGEST_GROUP, this.forgetIdleAfterMs).catch((err: unknown) => this.opts.onError?.(err));
        }
        if ((await this.indexOnce(this.consumers.loop)) === 0) await sleep(this.idlePollMs);
      } catch (err) {
        if (this.closed) break;
        this.opts.onError?.(err);
        // The backend is away, or a batch failed (its sink is away): its messages stay pending and
        // come back (the backlog, read at each scrape, shows them meanwhile).
        await sleep(1000);
      }
    }
  }

  /** One batch. The group is created again, once, if it went away with a Redis that restarted empty. */
  private async indexOnce(consumer: string): Promise<number> {
    try {
      return await this.readAndIndex(consumer);
    } catch (err) {
      if (!(err instanceof Error && err.message.includes('NOGROUP'))) throw err;
      this.groupReady = null;
      return this.readAndIndex(consumer);
    }
  }

  /** Messages a dead consumer left (now and then), else new ones. Returns how many were handled. */
  private async readAndIndex(consumer: string): Promise<number> {
    await this.ensureGroup();
    let batch: LogDelivery[] = [];
    if (Date.now() - this.lastClaimAt >= CLAIM_EVERY_MS) {
      this.lastClaimAt = Date.now();
      batch = await this.store.logGroupClaim(this.log, INGEST_GROUP, consumer, this.claimIdleMs, this.batchSize);
    }
    if (batch.length === 0) batch = await this.store.logGroupRead(this.log, INGEST_GROUP, consumer, this.batchSize);
    if (batch.length === 0) return 0;
    await this.indexBatch(consumer, batch);
    return batch.length;
  }

  /**
   * Index entries (and intent removals) are idempotent: written first, as plain commands grouped
   * by key. The counters are not: they go with the acknowledgement, applied once. A consumer
   * that dies in between leaves the batch pending; whoever takes it over writes the entries
   * again (no change) and the counters once.
   */
  private async indexBatch(consumer: string, batch: readonly LogDelivery[]): Promise<void> {
    const { ack, givenUp, writes, byMessage, items } = this.sort(batch);
    let failed = givenUp;
    const { entries, counters } = splitWrites(writes);
    // The sink first: a failure there leaves the batch pending, its records still in the state.
    const released = this.opts.sink === undefined ? [] : await this.moveToSink(this.opts.sink, items);
    try {
      await this.store.writeBatch([...entries, ...released]);
    } catch (err) {
      // The connection: the batch stays pending and comes back. A write refused by Redis (a key of
      // the wrong type): every other command of the pipeline was applied; go on.
      if (!this.store.available()) throw err;
      failed++;
      this.opts.onError?.(err);
    }
    if (ack.length === 0) return;
    const result = await this.store.logGroupAckWith(this.log, INGEST_GROUP, consumer, ack, counters);
    if (result.applied) failed += result.failed;
    else {
      // Some message was taken over meanwhile (this consumer looked dead): each of the others alone.
      for (const id of ack) {
        const own = (byMessage.get(id) ?? []).filter((w) => w.op === 'increment');
        failed += (await this.store.logGroupAckWith(this.log, INGEST_GROUP, consumer, [id], own)).failed;
      }
    }
    this.opts.onIndexed?.({ indexed: ack.length, failedWrites: failed });
  }

  /**
   * Builds each message's writes on its own, so one that cannot be read or indexed is reported
   * and acknowledged without writes, rather than holding up its batch. A message of a newer
   * format (a rolling upgrade) is left pending for a consumer that reads it.
   */
  private sort(batch: readonly LogDelivery[]): SortedBatch {
    const sorted: SortedBatch = { ack: [], givenUp: 0, writes: [], byMessage: new Map(), items: [] };
    const recordIndexes = this.opts.sink === undefined;
    for (const m of batch) {
      const decoded = decodeIndexMessage(m.message);
      if (decoded === 'newer') continue;
      let writes: BulkWriteOp[] = [];
      try {
        if (decoded === null) throw new Error('unreadable');
        if (m.deliveries > MAX_DELIVERIES && recordIndexes) throw new Error(`delivered ${m.deliveries} times`);
        writes = indexWritesOf([decoded], this.opts.observers, recordIndexes, this.store.sharded);
        if (decoded.record === null) throw new Error('its record fields are unreadable (its intent is settled)');
        sorted.items.push(decoded);
      } catch (err) {
        sorted.givenUp++;
        this.opts.onError?.(new Error(`audit ingest: message ${m.id} acknowledged without indexing: ${err instanceof Error ? err.message : String(err)}`));
      }
      sorted.ack.push(m.id);
      for (const w of writes) sorted.writes.push(w);
      sorted.byMessage.set(m.id, writes);
    }
    return sorted;
  }

  /**
   * Reads the batch's records from the state and hands them to the sink; returns the writes that
   * let them go (values and action pointers), applied with the batch. A record already gone was
   * moved by an earlier delivery of its message (the process died before acknowledging it); one
   * the sink refuses stays in the state, findable by id, and is reported.
   */
  private async moveToSink(sink: RecordSink, items: readonly IndexItem[]): Promise<WriteOp[]> {
    const readable = items.filter((item): item is IndexItem & { record: IndexedRecord } => item.record !== null);
    if (readable.length === 0) return [];
    const keys = readable.map(({ record }) => recordKey(record, record.id));
    const values = await this.store.getMany(keys);
    const moving: { id: string; json: string; key: StateKey; scopeCode: string; actionId: string | null }[] = [];
    readable.forEach(({ record, scopeCode, actionId }, i) => {
      const json = values[i] ?? null;
      if (json === null) return;
      // The value under the record's key must be that record (encodeRecord writes the id first).
      if (!json.startsWith(`{"id":${JSON.stringify(record.id)}`)) {
        this.opts.onError?.(new Error(`audit ingest: the value of record ${record.id} is not that record; left in the state`));
        return;
      }
      moving.push({ id: record.id, json, key: keys[i] as StateKey, scopeCode, actionId: actionId ?? null });
    });
    const refused = await sink.store(moving);
    // The deletes together (one DEL), then the pointers.
    const deletes: WriteOp[] = [];
    const pointers: WriteOp[] = [];
    for (const { id, json, key, scopeCode, actionId } of moving) {
      if (refused.has(id)) {
        this.opts.onError?.(new Error(`audit ingest: record ${id} refused by the audit store; left in the state`));
        continue;
      }
      deletes.push({ op: 'delete', key });
      // Messages of older writers lack the action id: the value has it.
      const pointer = actionId ?? decodeRecord(json)?.action_id;
      if (pointer !== undefined) pointers.push({ op: 'indexRemove', index: actionPointerKey(pointer), member: globalMember(id, scopeCode) });
    }
    return [...deletes, ...pointers];
  }

  /** Creates the group once per process (from the log's start: nothing appended before is missed). */
  private ensureGroup(): Promise<void> {
    this.groupReady ??= this.store.logGroupCreate(this.log, INGEST_GROUP, 'start').then(
      () => {},
      (err: unknown) => {
        this.groupReady = null;
        throw err;
      },
    );
    return this.groupReady;
  }
}

/**
 * Index entries (idempotent), grouped by key so each key is one command, and the counters
 * (applied exactly once, with the acknowledgement; the script sums them per key).
 */
function splitWrites(writes: readonly BulkWriteOp[]): { entries: BulkWriteOp[]; counters: BulkWriteOp[] } {
  const byKey = new Map<string, BulkWriteOp[]>();
  const counters: BulkWriteOp[] = [];
  for (const w of writes) {
    if (w.op === 'increment') {
      counters.push(w);
      continue;
    }
    const name = keyName(w.index);
    const group = byKey.get(name);
    if (group === undefined) byKey.set(name, [w]);
    else group.push(w);
  }
  return { entries: [...byKey.values()].flat(), counters };
}
