import type { BulkWriteOp, StateStore, WriteOp } from '@sluice/state';
import { pointerWrite, valueWrite } from '../record-writes.js';
import { indexWritesOf, sumCounters, type AuditIngest, type AuditObserver, type IngestEntry, type IngestReport } from './ingest.js';

export interface MemoryIngestOptions {
  observers: readonly AuditObserver[];
  /** How long a record waits before its batch is indexed (default 50 ms). */
  flushDelayMs?: number;
  /** A batch this large is indexed at once, without waiting for the timer (default 1000). */
  maxPending?: number;
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
 * reader through one of them indexes what any of them appended.
 */
class StoreQueue {
  pending: Queued[] = [];
  timer: NodeJS.Timeout | undefined;
}

const queues = new WeakMap<StateStore, StoreQueue>();

/**
 * The one-process ingest: append keeps the record object in a queue (no encoding, no write on
 * the request path); a short timer, a full queue or any reader writes the queue in one batch:
 * values, action pointers, index entries and rollups.
 */
export class MemoryAuditIngest implements AuditIngest {
  private readonly queue: StoreQueue;
  private readonly flushDelayMs: number;
  private readonly maxPending: number;

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
  }

  async append(entry: IngestEntry): Promise<void> {
    const { queue } = this;
    queue.pending.push({ entry, from: this });
    if (queue.pending.length >= this.maxPending) this.schedule(0);
    else if (queue.timer === undefined) this.schedule(this.flushDelayMs);
  }

  async catchUp(): Promise<boolean> {
    await this.flush();
    return true;
  }

  async close(): Promise<void> {
    await this.flush();
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.queue.timer);
    this.queue.timer = setTimeout(() => {
      this.flush().catch((err: unknown) => this.opts.onError?.(err));
    }, delayMs);
    this.queue.timer.unref();
  }

  private async flush(): Promise<void> {
    const { queue } = this;
    clearTimeout(queue.timer);
    queue.timer = undefined;
    if (queue.pending.length === 0) return;
    const batch = queue.pending;
    queue.pending = [];
    const writes: WriteOp[] = [];
    const bulk: BulkWriteOp[] = [];
    const origins = new Map<MemoryAuditIngest, number>();
    for (const { entry, from } of batch) {
      const { record, scopeCode, valueWritten, intent } = entry;
      let indexWrites: BulkWriteOp[];
      try {
        indexWrites = indexWritesOf([{ record, scopeCode, intent }], from.opts.observers);
      } catch (err) {
        // Stored and findable all the same; only its index entries and rollups are missing.
        from.opts.onError?.(err);
        indexWrites = [];
      }
      if (!valueWritten) writes.push(valueWrite(record));
      writes.push(pointerWrite(record, scopeCode));
      for (const w of indexWrites) bulk.push(w);
      origins.set(from, (origins.get(from) ?? 0) + 1);
    }
    for (const w of sumCounters(bulk)) writes.push(w);
    await this.store.writeBatch(writes);
    for (const [from, indexed] of origins) {
      from.opts.onIndexed?.({ indexed, failedWrites: 0, backlog: queue.pending.length });
      await from.opts.afterFlush?.();
    }
  }
}
