/**
 * Several rounds of the same scenarios (`npm run bench -- --rounds N`): on a shared VM single runs
 * of one build differ by more than some targets' budgets (±10–25 % in req/s), so a pair like
 * (b)/(k) is judged on the median of runs taken in turn (a, b, k, a, b, k…), which a drift of the
 * machine shifts alike.
 */
import type { ScenarioResult } from './scenario-result.js';

/**
 * The run with the median throughput; of an even number, the lower of the two middle ones (the
 * conservative reading). Its other numbers (CPU, latency) come from that same run.
 */
export function medianRun(runs: readonly ScenarioResult[]): ScenarioResult {
  if (runs.length === 0) throw new Error('medianRun: no runs');
  return lowerMedianBy(runs, (r) => r.reqPerSec);
}

/** The item with the median `rate`; of an even number, the lower middle one. `items` must not be empty. */
export function lowerMedianBy<T>(items: readonly T[], rate: (item: T) => number): T {
  const sorted = [...items].sort((x, y) => rate(x) - rate(y));
  return sorted[Math.floor((sorted.length - 1) / 2)] as T;
}

/** Each scenario's runs over the rounds, in the order the scenarios first ran, reduced to their median runs. */
export function medianRuns(runs: readonly ScenarioResult[]): ScenarioResult[] {
  const byId = new Map<string, ScenarioResult[]>();
  for (const r of runs) {
    const list = byId.get(r.id);
    if (list === undefined) byId.set(r.id, [r]);
    else list.push(r);
  }
  return [...byId.values()].map(medianRun);
}
