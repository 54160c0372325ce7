import type { StoredTimeInterval } from '@sluice/core';
import { firstInTenantLine, getOrAdd } from '../policies/tenant-line.js';
import { compileSchedule, type IntervalSchedule } from './interval-schedule.js';

export interface CompiledInterval {
  interval: StoredTimeInterval;
  schedule: IntervalSchedule;
}

/**
 * One replica's snapshot of every time interval, compiled, by namespace, tenant and name.
 * Immutable: a reload builds a new one and swaps it whole. A rule names an interval; for an
 * action it resolves in the action's namespace, at its tenant or else the nearest parent that
 * defines the name (`acme.eu` before `acme`), as silences cover child tenants.
 */
export class IntervalIndex {
  private readonly byScope = new Map<string, Map<string, Map<string, CompiledInterval>>>();
  private readonly names = new Set<string>();
  readonly all: readonly StoredTimeInterval[];

  constructor(intervals: readonly StoredTimeInterval[], onUnusable: (interval: StoredTimeInterval, err: unknown) => void = () => {}) {
    this.all = intervals;
    for (const interval of intervals) {
      let schedule: IntervalSchedule;
      try {
        schedule = compileSchedule(interval);
      } catch (err) {
        onUnusable(interval, err);
        continue;
      }
      const tenants = getOrAdd(this.byScope, interval.namespace, () => new Map<string, Map<string, CompiledInterval>>());
      getOrAdd(tenants, interval.tenant, () => new Map<string, CompiledInterval>()).set(interval.name, { interval, schedule });
      this.names.add(interval.name);
    }
  }

  /** Whether any scope defines the name (what rule load can check, not knowing the actions' scopes). */
  defines(name: string): boolean {
    return this.names.has(name);
  }

  /** The interval a rule's name means for an action of this namespace and tenant. */
  resolve(namespace: string, tenant: string, name: string): CompiledInterval | undefined {
    const tenants = this.byScope.get(namespace);
    return tenants && firstInTenantLine(tenant, (scope) => tenants.get(scope)?.get(name));
  }

  /** Exactly this scope's interval of the name (the API's view). */
  get(namespace: string, tenant: string, name: string): CompiledInterval | undefined {
    return this.byScope.get(namespace)?.get(tenant)?.get(name);
  }
}
