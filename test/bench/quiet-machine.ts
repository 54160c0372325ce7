/**
 * Benchmarks on a shared machine: before a scenario, wait (bounded) until the machine is nearly
 * idle, so other work does not land in the numbers. The "other cores" column of the report
 * shows what still did.
 */
import { machineBusyMs } from './proc-stats.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Cores busy over a short window. */
async function busyCores(windowMs = 1000): Promise<number> {
  const before = machineBusyMs();
  await sleep(windowMs);
  return (machineBusyMs() - before) / windowMs;
}

/**
 * Resolves once a 3 s window shows at most `maxCores` busy, or after `maxWaitS` (then returns
 * false). Returns at once when maxWaitS is 0.
 */
export async function waitForQuiet(maxCores: number, maxWaitS: number, onWait?: (cores: number) => void): Promise<boolean> {
  if (maxWaitS <= 0) return true;
  const deadline = Date.now() + maxWaitS * 1000;
  for (;;) {
    const cores = await busyCores(3000);
    if (cores <= maxCores) return true;
    if (Date.now() >= deadline) return false;
    onWait?.(cores);
  }
}
