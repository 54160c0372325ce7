import { compareCodeUnits, type CoverageEntry } from '@sluice/core';
import type { TupleCount } from './coverage-reader.js';

/** 0 uncovered, 1 partially covered, 2 covered: the order entries are listed in. */
function coverageRank(e: CoverageEntry): number {
  if (e.covered === 0) return 0;
  return e.uncovered > 0 ? 1 : 2;
}

function compareEntries(a: CoverageEntry, b: CoverageEntry): number {
  return (
    coverageRank(a) - coverageRank(b) ||
    compareCodeUnits(a.namespace, b.namespace) ||
    compareCodeUnits(a.tenant, b.tenant) ||
    compareCodeUnits(a.provider, b.provider) ||
    compareCodeUnits(a.action_type, b.action_type)
  );
}

/** Sums the per-day tuple counts into one entry per (namespace, tenant, provider, action_type), sorted. */
export function foldEntries(counts: readonly TupleCount[]): CoverageEntry[] {
  const entries = new Map<string, { entry: CoverageEntry; rules: Set<string> }>();
  for (const { tuple, count } of counts) {
    const id = JSON.stringify([tuple.namespace, tuple.tenant, tuple.provider, tuple.action_type]);
    let acc = entries.get(id);
    if (!acc) {
      const { namespace, tenant, provider, action_type } = tuple;
      const entry = { namespace, tenant, provider, action_type, total: 0, covered: 0, uncovered: 0, matched_rules: [] };
      acc = { entry, rules: new Set() };
      entries.set(id, acc);
    }
    acc.entry.total += count;
    if (tuple.matched_rule === null) acc.entry.uncovered += count;
    else {
      acc.entry.covered += count;
      acc.rules.add(tuple.matched_rule);
    }
  }
  return [...entries.values()].map(({ entry, rules }) => ({ ...entry, matched_rules: [...rules].sort(compareCodeUnits) })).sort(compareEntries);
}
