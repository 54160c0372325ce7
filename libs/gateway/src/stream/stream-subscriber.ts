import { KEEP_ALIVE_FRAME, eventFrame, laggedFrame, type StreamEvent } from './stream-event.js';

/** Where a subscriber's frames go (the HTTP response). `write` is false when the socket is backed up. */
export interface FrameSink {
  write(frame: string): boolean;
  /** Called once the socket has room again after a `false` write. */
  onDrain(listener: () => void): void;
}

/**
 * One client. Frames go straight to the socket while it keeps up; when it backs up, up to
 * `maxQueued` events wait. Beyond that the client has lagged: what is waiting is dropped and
 * counted, and once the socket drains it gets `lagged {skipped}` and continues from the events
 * that arrive after. Its memory is bounded by the queue, whatever the client does.
 */
export class StreamSubscriber {
  private queue: string[] = [];
  private skipped = 0;
  private blocked = false;
  private closed = false;

  constructor(
    private readonly sink: FrameSink,
    private readonly maxQueued: number,
    private readonly accepts: (event: StreamEvent) => boolean,
  ) {
    sink.onDrain(() => this.drain());
  }

  offer(event: StreamEvent): void {
    if (this.closed || !this.accepts(event)) return;
    this.send(eventFrame(event));
  }

  keepAlive(): void {
    if (!this.closed && !this.blocked && this.skipped === 0) this.blocked = !this.sink.write(KEEP_ALIVE_FRAME);
  }

  close(): void {
    this.closed = true;
    this.queue = [];
  }

  private send(frame: string): void {
    if (!this.blocked) {
      this.blocked = !this.sink.write(frame);
      return;
    }
    if (this.queue.length < this.maxQueued) {
      this.queue.push(frame);
      return;
    }
    this.skipped += this.queue.length + 1;
    this.queue = [];
  }

  private drain(): void {
    this.blocked = false;
    if (this.skipped > 0) {
      const skipped = this.skipped;
      this.skipped = 0;
      this.blocked = !this.sink.write(laggedFrame(skipped));
    }
    while (!this.blocked && this.queue.length > 0) this.blocked = !this.sink.write(this.queue.shift() as string);
  }
}
