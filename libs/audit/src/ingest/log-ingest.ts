import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { GLOBAL_SCOPE, compareLogIds, type BulkWriteOp, type LogDelivery, type StateKey, type StateStore, type WriteOp } from '@sluice/state';
import { globalMember, memberScopeCode } from '../record-ref.js';
import { pointerWrite, valueWrite } from '../record-writes.js';
import {
  decodeIndexMessage,
  encodeIndexMessage,
  indexWritesOf,
  type AuditIngest,
  type AuditObserver,
  type IndexItem,
  type IngestEntry,
  type IngestReport,
} from './ingest.js';

/** The shared ingest log and its consumer group (durable names: never rename without a migration). */
const INGEST_LOG: StateKey = { kind: 'audit-ingest', ...GLOBAL_SCOPE, id: 'log' };
const INGEST_GROUP = 'indexer';

export interface LogIngestOptions {
  observers: readonly AuditObserver[];
  /** Messages indexed per batch (default 500). */
  batchSize?: number;
  /** A message pending this long is taken over from its consumer, presumed dead (default 10 s). */
  claimIdleMs?: number;
  /** How long catchUp waits for batches other processes are indexing before it gives up (default 5 s). */
  catchUpTimeoutMs?: number;
  onIndexed?: (report: IngestReport) => void;
  onError?: (err: unknown) => void;
}

/** Deliveries after which a message that keeps failing is acknowledged without its writes. */
const MAX_DELIVERIES = 5;
/** How often a busy consumer looks for messages a dead one left pending. */
const CLAIM_EVERY_MS = 1000;
/** Pause of the indexer loop when the log is empty. */
const IDLE_POLL_MS = 20;

/**
 * The shared-state ingest (Redis). The request path writes the record, its action pointer and a
 * compact message (the record's global member, and the intent to remove) to the ingest log in
 * one pipeline. Consumers of one group — the indexer loop of every worker process, and any
 * process that reads the indexes (catchUp) — read batches of messages, load their records, and
 * apply the whole batch's index entries and pre-aggregated rollups together with the batch's
 * acknowledgement (StateStore.logGroupAckWith): a consumer that dies mid-batch has its messages
 * handed to another, and a batch handed out twice is applied once.
 */
export class LogAuditIngest implements AuditIngest {
  private readonly batchSize: number;
  private readonly claimIdleMs: number;
  private readonly catchUpTimeoutMs: number;
  /** Consumer names of this process: one for its indexer loop, one for its catch-ups (a claim between them must change owner). */
  private readonly consumers: { loop: string; reader: string };
  private groupReady: Promise<void> | null = null;
  private lastClaimAt = 0;
  private loop: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly store: StateStore,
    private readonly opts: LogIngestOptions,
  ) {
    this.batchSize = opts.batchSize ?? 500;
    this.claimIdleMs = opts.claimIdleMs ?? 10_000;
    this.catchUpTimeoutMs = opts.catchUpTimeoutMs ?? 5000;
    // Host and pid say which process holds a batch (XINFO CONSUMERS); the random part keeps a
    // restarted process (same host, pid 1 in a container) from passing for the dead one.
    const base = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.consumers = { loop: `${base}-loop`, reader: `${base}-read` };
  }

  async append({ record, scopeCode, valueWritten, intent }: IngestEntry): Promise<void> {
    const message = encodeIndexMessage(record, globalMember(record.id, scopeCode), intent);
    const writes: WriteOp[] = valueWritten ? [pointerWrite(record, scopeCode)] : [valueWrite(record), pointerWrite(record, scopeCode)];
    await this.store.writeBatch(writes, { append: { log: INGEST_LOG, message } });
  }

  /**
   * Indexes every message appended before the call: reads undelivered ones itself, and waits
   * for batches other consumers hold (taking over those idle past claimIdleMs). Acknowledged
   * messages leave the log, so "the oldest message still there is newer than the last one at
   * the start" means done. Gives up after catchUpTimeoutMs (a reader then sees the indexes as
   * they are).
   */
  async catchUp(): Promise<void> {
    const target = await this.store.logLastId(INGEST_LOG);
    if (target === null) return;
    const deadline = Date.now() + this.catchUpTimeoutMs;
    for (;;) {
      const [oldest] = await this.store.logRange(INGEST_LOG, { limit: 1 });
      if (oldest === undefined || compareLogIds(oldest.id, target) > 0) return;
      if ((await this.indexOnce(this.consumers.reader)) > 0) continue;
      if (Date.now() > deadline) return;
      await sleep(5);
    }
  }

  /** Starts this process's indexer loop (worker processes): until close(). */
  start(): void {
    this.loop ??= this.runLoop();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.loop;
  }

  private async runLoop(): Promise<void> {
    while (!this.closed) {
      try {
        if ((await this.indexOnce(this.consumers.loop)) === 0) await sleep(IDLE_POLL_MS);
      } catch (err) {
        this.opts.onError?.(err);
        // The backend is away, or a batch failed: its messages stay pending and come back.
        await sleep(1000);
      }
    }
  }

  /** One batch: messages a dead consumer left (now and then), else new ones. Returns how many were indexed. */
  private async indexOnce(consumer: string): Promise<number> {
    await this.ensureGroup();
    try {
      return await this.readAndIndex(consumer);
    } catch (err) {
      // The log (and its group) went away with a Redis that restarted empty: create them again.
      if (err instanceof Error && err.message.includes('NOGROUP')) this.groupReady = null;
      throw err;
    }
  }

  private async readAndIndex(consumer: string): Promise<number> {
    let batch: LogDelivery[] = [];
    if (Date.now() - this.lastClaimAt >= CLAIM_EVERY_MS) {
      this.lastClaimAt = Date.now();
      batch = await this.store.logGroupClaim(INGEST_LOG, INGEST_GROUP, consumer, this.claimIdleMs, this.batchSize);
    }
    if (batch.length === 0) batch = await this.store.logGroupRead(INGEST_LOG, INGEST_GROUP, consumer, this.batchSize);
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
    const items = this.itemsOf(batch);
    const ids = batch.map((m) => m.id);
    const { entries, counters } = splitWrites(indexWritesOf(items, this.opts.observers));
    await this.store.writeBatch(entries);
    const result = await this.store.logGroupAckWith(INGEST_LOG, INGEST_GROUP, consumer, ids, counters);
    let failed = result.failed;
    if (!result.applied) {
      // Some message was taken over meanwhile (this consumer looked dead): each of the others alone.
      failed = 0;
      for (const [i, id] of ids.entries()) {
        const item = items[i];
        if (item === undefined) continue;
        const one = await this.store.logGroupAckWith(
          INGEST_LOG,
          INGEST_GROUP,
          consumer,
          [id],
          splitWrites(indexWritesOf([item], this.opts.observers)).counters,
        );
        failed += one.failed;
      }
    }
    if (this.opts.onIndexed) this.opts.onIndexed({ indexed: batch.length, failedWrites: failed, backlog: await this.store.logLength(INGEST_LOG) });
  }

  /** What the messages say; a message delivered too often (or unreadable) is indexed as nothing. */
  private itemsOf(batch: readonly LogDelivery[]): IndexItem[] {
    return batch.map((m) => {
      const decoded = decodeIndexMessage(m.message);
      const poisoned = m.deliveries > MAX_DELIVERIES;
      if (poisoned || decoded?.record === null || decoded === null) {
        this.opts.onError?.(
          new Error(`audit ingest: message ${m.id} ${poisoned ? `failed ${MAX_DELIVERIES} times` : 'is unreadable'}; acknowledged without indexing`),
        );
      }
      if (decoded === null) return { record: null, scopeCode: '', intent: undefined };
      return { record: poisoned ? null : decoded.record, scopeCode: memberScopeCode(decoded.member), intent: decoded.intent };
    });
  }

  /** Creates the group once per process (from the log's start: nothing appended before is missed), again after a NOGROUP. */
  private ensureGroup(): Promise<void> {
    this.groupReady ??= this.store.logGroupCreate(INGEST_LOG, INGEST_GROUP, 'start').then(
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
 * Index entries (idempotent), grouped by key so each key is one command, and counters (applied
 * exactly once, with the acknowledgement).
 */
function splitWrites(writes: readonly BulkWriteOp[]): { entries: BulkWriteOp[]; counters: BulkWriteOp[] } {
  const byKey = new Map<string, BulkWriteOp[]>();
  const counters: BulkWriteOp[] = [];
  for (const w of writes) {
    if (w.op === 'increment') {
      counters.push(w);
      continue;
    }
    const { kind, namespace, tenant, id } = w.index;
    const name = `${kind}\u0000${namespace}\u0000${tenant}\u0000${id}`;
    const group = byKey.get(name);
    if (group === undefined) byKey.set(name, [w]);
    else group.push(w);
  }
  return { entries: [...byKey.values()].flat(), counters };
}
