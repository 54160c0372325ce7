/**
 * Where a backend reports errors no caller can be handed: a connection that drops and
 * reconnects, a worker whose poll fails. `suppressed` counts identical errors dropped since
 * this message was last reported.
 */
export type BackgroundErrorHandler = (err: Error, info: { suppressed: number }) => void;

export interface ThrottleOptions {
  /** An identical message is reported at most once per window (default 30 s). */
  windowMs?: number;
  /** Injectable for tests; a reporter has no clock of its own to use. */
  now?: () => number;
}

/** Past this many remembered messages, the ones outside the window are forgotten. */
const PRUNE_AT = 64;

/**
 * Wraps a handler so each message passes at most once per window. During a Redis outage every
 * connection fails the same way on each reconnect, a line per connection every few hundred ms.
 */
export function throttleErrors(report: BackgroundErrorHandler, opts: ThrottleOptions = {}): (err: unknown) => void {
  const windowMs = opts.windowMs ?? 30_000;
  const now = opts.now ?? Date.now;
  const last = new Map<string, { at: number; suppressed: number }>();
  return (raw) => {
    const err = raw instanceof Error ? raw : new Error(String(raw));
    const at = now();
    const seen = last.get(err.message);
    if (seen && at - seen.at < windowMs) {
      seen.suppressed += 1;
      return;
    }
    if (last.size >= PRUNE_AT) {
      for (const [message, entry] of last) {
        if (at - entry.at < windowMs) continue;
        // Its window is over: what it held back is told now, before it is forgotten.
        if (entry.suppressed > 0) report(new Error(message), { suppressed: entry.suppressed });
        last.delete(message);
      }
    }
    last.set(err.message, { at, suppressed: 0 });
    report(err, { suppressed: seen?.suppressed ?? 0 });
  };
}

/** The default when a process wires no handler: one stderr line per (throttled) error. */
export function writeErrorToStderr(component: string): BackgroundErrorHandler {
  return (err, { suppressed }) => {
    process.stderr.write(`sluice ${component}: ${err.message}${suppressed ? ` (and ${suppressed} identical since the last report)` : ''}\n`);
  };
}
