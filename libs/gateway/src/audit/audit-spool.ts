import { AsyncResource } from 'node:async_hooks';

/**
 * Audit records whose write failed after their action had already run (the state backend went
 * away mid-dispatch): kept in this process, oldest first, and written again every `retryMs`
 * until the backend answers. Bounded: past `maxEntries` the oldest is dropped and counted. A
 * process that dies with entries spooled loses them (docs/operations.md says so).
 */
export interface AuditSpoolOptions<T> {
  maxEntries: number;
  retryMs: number;
  write(entry: T): Promise<void>;
  onDropped(): void;
  onWritten(count: number): void;
}

export class AuditSpool<T> {
  private readonly entries: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | null = null;

  constructor(private readonly opts: AuditSpoolOptions<T>) {}

  get size(): number {
    return this.entries.length;
  }

  add(entry: T): void {
    if (this.entries.length >= this.opts.maxEntries) {
      this.entries.shift();
      this.opts.onDropped();
    }
    this.entries.push(entry);
    this.schedule();
  }

  /** Writes what is spooled, in order, until one write fails (the rest wait for the next try). */
  flush(): Promise<void> {
    this.flushing ??= this.writeInOrder().finally(() => {
      this.flushing = null;
      if (this.entries.length > 0) this.schedule();
    });
    return this.flushing;
  }

  /** One last try, then stops retrying. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.entries.length > 0) await this.flush();
    clearTimeout(this.timer);
  }

  /** The entry being written is taken off first, so a full spool dropping its oldest never drops it. */
  private async writeInOrder(): Promise<void> {
    let written = 0;
    try {
      for (let entry = this.entries.shift(); entry !== undefined; entry = this.entries.shift()) {
        try {
          await this.opts.write(entry);
        } catch (err) {
          // Still unreachable: back at the head, tried again later.
          this.entries.unshift(entry);
          throw err;
        }
        written++;
      }
    } catch {
      // Retried by the next flush.
    } finally {
      if (written > 0) this.opts.onWritten(written);
    }
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(this.retry, this.opts.retryMs);
    this.timer.unref();
  }

  /** Bound to the spool's own context: a retry is no part of the dispatch whose failure armed it. */
  private readonly retry = AsyncResource.bind(() => {
    this.timer = undefined;
    void this.flush();
  });
}
