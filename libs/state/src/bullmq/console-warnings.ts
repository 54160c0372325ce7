import { format } from 'node:util';

/**
 * The warnings BullMQ writes with console.warn (plain text on stderr), once for every connection
 * it opens: a Redis whose eviction policy is not noeviction, or older than it recommends. There
 * is no option to turn them off without also skipping the version check (which slows blocking
 * reads down to whole seconds).
 */
const BULLMQ_WARNINGS = [/^IMPORTANT! Eviction policy is /, /^It is highly recommended to use a minimum Redis version /];

const reporters = new Set<(err: Error) => void>();
let restore: (() => void) | undefined;

/**
 * While a scheduler is open, BullMQ's own warnings go to `report` (the first open scheduler's,
 * so a process logs each once) instead of stderr: process output stays JSON lines. Any other
 * console.warn goes where it went. Returns the undo, called when the scheduler closes.
 */
export function routeBullMqWarnings(report: (err: Error) => void): () => void {
  reporters.add(report);
  if (!restore) {
    const original = console.warn;
    const routed = (...args: unknown[]): void => {
      const text = format(...args);
      const [first] = reporters;
      if (first && BULLMQ_WARNINGS.some((w) => w.test(text))) first(new Error(text.replace(/\s+/g, ' ')));
      else original.apply(console, args);
    };
    console.warn = routed;
    restore = () => {
      if (console.warn === routed) console.warn = original;
    };
  }
  return () => {
    reporters.delete(report);
    if (reporters.size === 0) {
      restore?.();
      restore = undefined;
    }
  };
}
