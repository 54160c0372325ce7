import type { ChainDefinition, ErrorDetail } from '@sluice/core';

/**
 * What JSON Schema cannot check of a definition: its providers exist, its sub-chains exist, and
 * no chain reaches itself through sub-chains. `all` is every definition it may name (itself included).
 */
export function checkDefinition(def: ChainDefinition, all: ReadonlyMap<string, ChainDefinition>, providerExists: (name: string) => boolean): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  def.steps.forEach((step, i) => {
    if (step.provider !== undefined && !providerExists(step.provider))
      problems.push({ path: `steps.${i}.provider`, message: `unknown provider ${step.provider}` });
    if (step.sub_chain !== undefined && !all.has(step.sub_chain)) problems.push({ path: `steps.${i}.sub_chain`, message: `unknown chain ${step.sub_chain}` });
  });
  const cycle = cycleFrom(def.name, all);
  if (cycle) problems.push({ path: 'steps', message: `sub_chain cycle: ${cycle.join(' → ')}` });
  return problems;
}

/** A path of sub-chain references from `start` back to a chain already on it, or null. */
export function cycleFrom(start: string, all: ReadonlyMap<string, ChainDefinition>): string[] | null {
  const path: string[] = [];
  const done = new Set<string>();
  const visit = (name: string): string[] | null => {
    const at = path.indexOf(name);
    if (at >= 0) return [...path.slice(at), name];
    if (done.has(name)) return null;
    const def = all.get(name);
    if (!def) return null;
    path.push(name);
    for (const step of def.steps) {
      if (step.sub_chain === undefined) continue;
      const found = visit(step.sub_chain);
      if (found) return found;
    }
    path.pop();
    done.add(name);
    return null;
  };
  return visit(start);
}

/**
 * The sub-chains a run of `def` can reach, as `find` gives them now: what the run keeps, so later
 * edits change later runs only. A cycle (definitions written by two replicas at once can store
 * one that neither write alone would pass) is returned instead, for the run to be refused.
 */
export function reachableSubChains(
  def: ChainDefinition,
  find: (name: string) => ChainDefinition | undefined,
): { subChains: Record<string, ChainDefinition> } | { cycle: string[] } {
  const all = new Map<string, ChainDefinition>([[def.name, def]]);
  const pending = [def];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    for (const step of next.steps) {
      if (step.sub_chain === undefined || all.has(step.sub_chain)) continue;
      const sub = find(step.sub_chain);
      if (!sub) continue; // the step fails with CHAIN_NOT_FOUND when it is reached
      all.set(sub.name, sub);
      pending.push(sub);
    }
  }
  const cycle = cycleFrom(def.name, all);
  if (cycle) return { cycle };
  all.delete(def.name);
  return { subChains: Object.fromEntries(all) };
}
