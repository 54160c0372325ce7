import { pino, type DestinationStream } from 'pino';

/**
 * The process log's destination: pino's own asynchronous one (sonic-boom), handed the lines of
 * one turn of the event loop as one string when the turn ends (setImmediate), not line by line.
 * sonic-boom appends each write to the chunk it has not written yet and measures that chunk's
 * byte length, which flattens it: with a write per line, a busy turn copied its growing chunk
 * again for every line, ~5 KiB per request of bench scenario (b). Lines keep their order; at
 * exit and on flush what is pending is handed over first, so a line logged just before
 * `process.exit()` is still written.
 */
export class TurnBufferedDestination implements DestinationStream {
  readonly #sonic: ReturnType<typeof pino.destination>;
  #pending: string[] = [];
  #scheduled = false;

  /** `dest`: a file descriptor (1, standard output) or a file path. */
  constructor(dest: number | string = 1) {
    this.#sonic = pino.destination({ dest, sync: false });
    process.on('exit', () => this.flushSync());
  }

  write(line: string): void {
    this.#pending.push(line);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.#handOver());
  }

  /** What pino's `logger.flush(cb)` calls: the pending lines written, then `cb`. */
  flush(cb: (err?: Error) => void = () => {}): void {
    this.#handOver();
    this.#sonic.flush(cb);
  }

  /** Writes everything pending before returning (exit). */
  flushSync(): void {
    this.#handOver();
    try {
      this.#sonic.flushSync();
    } catch {
      // Not open yet, or already closed: nothing more can be written.
    }
  }

  #handOver(): void {
    this.#scheduled = false;
    if (this.#pending.length === 0) return;
    const text = this.#pending.join('');
    this.#pending = [];
    this.#sonic.write(text);
  }
}

let stdout: TurnBufferedDestination | undefined;

/** Standard output for every logger of the process: one destination, one exit hook. */
export function processStdout(): TurnBufferedDestination {
  stdout ??= new TurnBufferedDestination(1);
  return stdout;
}
