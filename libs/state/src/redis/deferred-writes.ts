import { AsyncResource } from 'node:async_hooks';
import type { Redis } from 'ioredis';
import type { DeferrableWriteOp, StateKey } from '../state-store.js';
import { checkDeferrable, checkWrites } from '../write-ops.js';
import { applyDeferredScript } from './lua/index.js';
import { numbers, runScript } from './scripts.js';
import { scoreArg } from './time-index.js';

/*
 * Deferred writes (WriteBatchOptions.deferred) on Redis: a batch's counters and index entries go
 * to one queue entry (RPUSH, in the batch's pipeline) instead of a ZADD/INCRBY/PEXPIRE each, and
 * lua/apply-deferred-1.ts applies queued entries in bulk, one command per key touched. Under load
 * many entries share their keys (the same tenant's indexes, the same rollup bucket), so a write
 * costs a fraction of a command.
 */

export interface DeferredQueueOptions {
  /** Wait after a process queues before it applies, gathering more entries per script (default 20 ms). */
  delayMs?: number;
  /** Apply the shared queue this often, for entries of a process that died before applying (default 1000 ms). */
  sweepMs?: number;
  /** Entries per script call; bounds how long one call blocks Redis (default 200). */
  batchSize?: number;
  /** Told when an apply fails or some writes in it failed (the queue keeps going). */
  onError?: (err: unknown) => void;
  /** Told after each script call: entries applied, entries still queued, writes that failed. */
  onApplied?: (result: DeferredApplyResult) => void;
}

export interface DeferredApplyResult {
  popped: number;
  /** The shared queue's length after the call: near zero when the processes keep up. */
  left: number;
  failed: number;
}

/** A queue entry: 5 strings per write, as the script reads them. */
export function deferredEntry(ops: readonly DeferrableWriteOp[], render: (key: StateKey) => string): string {
  const flat: string[] = [];
  for (const w of checkWrites(checkDeferrable(ops))) {
    const ttl = w.ttl === undefined ? '' : String(w.ttl);
    if (w.op === 'indexAdd') flat.push('z', render(w.key), scoreArg(w.score), w.member, ttl);
    else if (w.op === 'increment') flat.push('i', render(w.key), String(w.by), '', ttl);
    else if (w.op === 'indexRemove') flat.push('r', render(w.key), '', w.member, '');
  }
  return JSON.stringify(flat);
}

/** One store's view of the shared queue: schedules applies after it queues, and sweeps. */
export class DeferredQueue {
  private readonly delayMs: number;
  private readonly batchSize: number;
  private readonly onError: (err: unknown) => void;
  private readonly onApplied: ((result: DeferredApplyResult) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly sweeper: NodeJS.Timeout;
  /** The apply in progress; the next waits for it, so one process never runs two at once. */
  private running: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly client: Redis,
    readonly queueKey: string,
    opts: DeferredQueueOptions = {},
  ) {
    this.delayMs = opts.delayMs ?? 20;
    this.batchSize = opts.batchSize ?? 200;
    this.onError = opts.onError ?? ((err) => process.emitWarning(`deferred writes: ${String(err)}`));
    this.onApplied = opts.onApplied;
    this.sweeper = setInterval(() => this.applyInBackground(), opts.sweepMs ?? 1000);
    this.sweeper.unref();
  }

  /** Called after this process queued an entry: applies it (and whatever else is queued) soon. */
  queued(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setTimeout(this.applySoon, this.delayMs);
    this.timer.unref();
  }

  /**
   * Bound to the context the queue was made in (start-up), not the one of the dispatch that
   * happens to arm the timer: a traced apply must not appear inside that dispatch's trace.
   */
  private readonly applySoon = AsyncResource.bind(() => {
    this.timer = undefined;
    this.applyInBackground();
  });

  /**
   * Applies everything queued when the call starts. Entries keep arriving under load, so it stops
   * after as many entries as the queue held at its first call (plus one batch), not when empty.
   */
  applyAll(): Promise<void> {
    const next = this.running.then(() => this.drain());
    this.running = next.catch(() => {});
    return next;
  }

  /** Stops the timers; what this process queued and has not applied yet is applied first. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    const pending = this.timer !== undefined;
    if (pending) clearTimeout(this.timer);
    this.timer = undefined;
    // Best effort: if Redis is gone, the entries wait in the queue for any other process.
    if (pending && this.client.status === 'ready') await this.applyAll().catch((err: unknown) => this.onError(err));
    await this.running;
  }

  private applyInBackground(): void {
    // While Redis is unreachable the queue waits there; the next sweep after reconnecting applies it.
    if (this.closed || this.client.status !== 'ready') return;
    this.applyAll().catch((err: unknown) => this.onError(err));
  }

  private async drain(): Promise<void> {
    let batch = await this.applyBatch();
    // What was queued at the start, at most (other processes may take some of it).
    let owed = batch.left;
    while (owed > 0 && batch.left > 0 && batch.popped > 0) {
      batch = await this.applyBatch();
      owed -= batch.popped;
    }
  }

  private async applyBatch(): Promise<DeferredApplyResult> {
    const reply = await runScript(this.client, applyDeferredScript, { keys: [this.queueKey], args: [this.batchSize] });
    const [popped = 0, left = 0, failed = 0] = numbers(reply, 3, 'applyDeferred');
    const result = { popped, left, failed };
    this.onApplied?.(result);
    if (failed > 0) this.onError(new Error(`${failed} deferred writes failed (wrong key type or unreadable entry)`));
    return result;
  }
}
