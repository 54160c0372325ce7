import type { AuditRecord } from '@sluice/core';
import type { BulkWriteOp, StateStore, WriteOp } from '@sluice/state';
import { pointerWrite, valueWrite } from '../record-writes.js';
import { addIndexWrites, addSummedCounters, type AuditIngest, type AuditObserver, type IngestEntry, type IngestReport, type RecordSink } from './ingest.js';

export interface MemoryIngestOptions {
  observers: readonly AuditObserver[];
  /** Records go there instead of into the state store (which then keeps only the rollups). */
  sink?: RecordSink | undefined;
  /** How long a record waits before its batch is indexed (default 50 ms). */
  flushDelayMs?: number;
  /** A batch this large is handed to the sink at once, without waiting for the timer (default 1000); a sink gets batches of at most this many. */
  maxPending?: number;
  /**
   * Without a sink: this many queued records are indexed at once, without waiting for the timer
   * (default 32). Indexing runs on the event loop, 60–75 µs a record with the trail at its cap, so
   * this bounds the pause a batch makes (~2.5 ms) when traffic fills the queue faster than the timer.
   */
  flushAt?: number;
  /**
   * With a sink: records queued beyond this many make append wait for a flush (the sink is slower
   * than the traffic), and while the sink refuses them the oldest beyond it are dropped (default 100 000).
   */
  maxQueued?: number;
  /** After each batch is written (the store evicts beyond its cap). */
  afterFlush?: () => Promise<void>;
  onIndexed?: (report: IngestReport) => void;
  /** Told when a batch could not be written. */
  onError?: (err: unknown) => void;
}

interface Queued {
  entry: IngestEntry;
  from: MemoryAuditIngest;
}

/**
 * The queue of one memory store, shared by every audit store on it (as the log is on Redis): a
 * reader through one of them indexes what any of them appended. Flushes run one after another,
 * so a reader's flush also waits for the one the timer started.
 */
class StoreQueue {
  pending: Queued[] = [];
  timer: NodeJS.Timeout | undefined;
  /** The timer is for a flush at once: the appends that follow need not set it again. */
  timerIsImmediate = false;
  flushing: Promise<boolean> = Promise.resolve(true);
}

const queues = new WeakMap<StateStore, StoreQueue>();
/** How soon a batch a sink refused is tried again, when nothing else flushes first. */
const SINK_RETRY_MS = 1000;

/**
 * The one-process ingest: append keeps the record object in a queue (no encoding, no write on
 * the request path); a short timer, a full queue or any reader writes the queue in one batch:
 * values, action pointers, index entries and rollups — or, with a sink, the records to the sink
 * and the rollups to the state. A batch the sink refuses goes back to the queue, still findable.
 */
export class MemoryAuditIngest implements AuditIngest {
  private readonly queue: StoreQueue;
  private readonly flushDelayMs: number;
  private readonly maxPending: number;
  private readonly maxQueued: number;
  /** Queued records that start a flush at once: flushAt, or maxPending with a sink (its database indexes, larger batches cost it less). */
  private readonly flushAt: number;

  constructor(
    private readonly store: StateStore,
    private readonly opts: MemoryIngestOptions,
  ) {
    let queue = queues.get(store);
    if (queue === undefined) {
      queue = new StoreQueue();
      queues.set(store, queue);
    }
    this.queue = queue;
    this.flushDelayMs = opts.flushDelayMs ?? 50;
    this.maxPending = opts.maxPending ?? 1000;
    this.maxQueued = opts.maxQueued ?? 100_000;
    this.flushAt = opts.sink === undefined ? (opts.flushAt ?? 32) : this.maxPending;
  }

  async append(entry: IngestEntry): Promise<void> {
    const { queue } = this;
    queue.pending.push({ entry, from: this });
    // Back-pressure rather than an unbounded queue, when the sink cannot keep up.
    if (this.opts.sink !== undefined && queue.pending.length > this.maxQueued) await this.flush();
    else if (queue.pending.length >= this.flushAt) {
      if (!queue.timerIsImmediate) this.schedule(0);
    } else if (queue.timer === undefined) this.schedule(this.flushDelayMs);
  }

  async backlog(): Promise<number> {
    return this.queue.pending.length;
  }

  /** Flushes what is queued; false when a sink refused some of it (it stays queued, retried shortly). */
  catchUp(): Promise<boolean> {
    return this.flush();
  }

  async close(): Promise<void> {
    await this.flush();
  }

  /** Records of an action id still queued (a sink refused them, or the timer has not fired), newest first. */
  queued(actionId: string): AuditRecord[] {
    const found: AuditRecord[] = [];
    for (let i = this.queue.pending.length - 1; i >= 0; i--) {
      const record = this.queue.pending[i]?.entry.record;
      if (record?.action_id === actionId) found.push(record);
    }
    return found;
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.queue.timer);
    this.queue.timerIsImmediate = delayMs === 0;
    this.queue.timer = setTimeout(() => {
      this.flush().catch((err: unknown) => this.opts.onError?.(err));
    }, delayMs);
    this.queue.timer.unref();
  }

  /** Runs after the flush in progress, so whoever awaits it sees everything queued before the call written. */
  private flush(): Promise<boolean> {
    const { queue } = this;
    const run = queue.flushing.catch(() => false).then(() => this.flushNow());
    queue.flushing = run;
    return run;
  }

  /** False when a sink refused records. */
  private async flushNow(): Promise<boolean> {
    const { queue } = this;
    clearTimeout(queue.timer);
    queue.timer = undefined;
    queue.timerIsImmediate = false;
    if (queue.pending.length === 0) return true;
    const batch = queue.pending;
    queue.pending = [];
    const refused = await this.toSinks(batch);
    const writes: WriteOp[] = [];
    const bulk: BulkWriteOp[] = [];
    const origins = new Map<MemoryAuditIngest, number>();
    for (const queued of batch) {
      if (refused.has(queued)) continue;
      const { entry, from } = queued;
      const { record, scopeCode, valueWritten, intent } = entry;
      const sunk = from.opts.sink !== undefined;
      const mark = bulk.length;
      try {
        addIndexWrites(bulk, { record, scopeCode, intent }, from.opts.observers, !sunk);
      } catch (err) {
        // Stored and findable all the same; only its index entries and rollups are missing.
        bulk.length = mark;
        from.opts.onError?.(err);
      }
      if (!sunk) {
        if (!valueWritten) writes.push(valueWrite(record));
        writes.push(pointerWrite(record, scopeCode));
      }
      origins.set(from, (origins.get(from) ?? 0) + 1);
    }
    addSummedCounters(writes, bulk);
    await this.store.writeBatch(writes);
    for (const [from, indexed] of origins) {
      from.opts.onIndexed?.({ indexed, failedWrites: 0 });
      await from.opts.afterFlush?.();
    }
    return refused.size === 0;
  }

  /**
   * Hands the batch's records to their stores' sinks; returns what a sink refused, queued again
   * at the front (in order, before what arrived meanwhile), the oldest dropped beyond maxQueued.
   */
  private async toSinks(batch: readonly Queued[]): Promise<Set<Queued>> {
    const bySink = new Map<RecordSink, Queued[]>();
    for (const queued of batch) {
      const { sink } = queued.from.opts;
      if (sink === undefined) continue;
      const group = bySink.get(sink);
      if (group === undefined) bySink.set(sink, [queued]);
      else group.push(queued);
    }
    const refused = new Set<Queued>();
    for (const [sink, group] of bySink) {
      for (let at = 0; at < group.length; at += this.maxPending) {
        const chunk = group.slice(at, at + this.maxPending);
        try {
          // Records the sink refuses for what they hold can never be stored: reported, not kept.
          const never = await sink.store(chunk.map(({ entry: { record } }) => ({ id: record.id, record })));
          if (never.size > 0) this.opts.onError?.(new Error(`audit: ${never.size} records refused by the audit store and dropped`));
        } catch (err) {
          this.opts.onError?.(err);
          for (const q of group.slice(at)) refused.add(q);
          break;
        }
      }
    }
    if (refused.size === 0) return refused;
    const { queue } = this;
    queue.pending = [...batch.filter((q) => refused.has(q)), ...queue.pending];
    const excess = queue.pending.length - this.maxQueued;
    if (excess > 0) {
      queue.pending.splice(0, excess);
      this.opts.onError?.(new Error(`audit: ${excess} queued records dropped: their store has refused them for too long`));
    }
    if (queue.timer === undefined) this.schedule(SINK_RETRY_MS);
    return refused;
  }
}
