import { compareCodeUnits, type CoverageReport } from '@sluice/core';
import type { CoverageRollupResult } from './types.js';

export interface LoadedRules {
  /** Every loaded rule, enabled or not. */
  loaded: number;
  /** Names of the enabled ones. */
  enabled: readonly string[];
}

/** The GET /v1/rules/coverage body: the counted entries, their summary, and the enabled rules none of them matched. */
export function coverageReport(result: CoverageRollupResult, rules: LoadedRules): CoverageReport {
  const { entries } = result;
  const matched = new Set(entries.flatMap((e) => e.matched_rules));
  let totalActions = 0;
  let fully = 0;
  let partially = 0;
  for (const e of entries) {
    totalActions += e.total;
    if (e.uncovered === 0) fully++;
    else if (e.covered > 0) partially++;
  }
  return {
    scanned_from: new Date(result.scannedFromMs).toISOString(),
    scanned_to: new Date(result.scannedToMs).toISOString(),
    total_actions: totalActions,
    unique_combinations: entries.length,
    fully_covered: fully,
    partially_covered: partially,
    uncovered: entries.length - fully - partially,
    rules_loaded: rules.loaded,
    entries,
    unmatched_rules: rules.enabled.filter((name) => !matched.has(name)).sort(compareCodeUnits),
  };
}
