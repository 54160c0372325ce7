import type { QuotaPolicy } from '@sluice/core';
import { scopeId } from './quota-keys.js';

/** A policy namespace or tenant matching any value. */
export const QUOTA_WILDCARD = '*';

/**
 * An immutable snapshot of the policies one replica enforces, swapped whole on every reload.
 * Matching: a policy applies when its namespace and tenant each equal the action's or are `*`.
 * When several apply, the most specific wins: an exact tenant beats `*`, then an exact
 * namespace beats `*`. Disabled policies never apply (a less specific one may then).
 */
export class QuotaIndex {
  private readonly byId = new Map<string, QuotaPolicy>();
  private readonly byScope = new Map<string, QuotaPolicy>();
  private readonly sorted: readonly QuotaPolicy[];

  constructor(policies: readonly QuotaPolicy[]) {
    for (const p of policies) {
      this.byId.set(p.id, p);
      if (p.enabled) this.byScope.set(scopeId(p.namespace, p.tenant), p);
    }
    this.sorted = [...this.byId.values()].sort(
      (a, b) => cmp(a.namespace, b.namespace) || cmp(a.tenant, b.tenant) || cmp(a.id, b.id),
    );
  }

  get(id: string): QuotaPolicy | undefined {
    return this.byId.get(id);
  }

  /** Every policy (enabled or not), by namespace, tenant, id. */
  list(): readonly QuotaPolicy[] {
    return this.sorted;
  }

  match(namespace: string, tenant: string): QuotaPolicy | undefined {
    if (this.byScope.size === 0) return undefined; // the common case: no policies, no work per dispatch
    return (
      this.byScope.get(scopeId(namespace, tenant)) ??
      this.byScope.get(scopeId(QUOTA_WILDCARD, tenant)) ??
      this.byScope.get(scopeId(namespace, QUOTA_WILDCARD)) ??
      this.byScope.get(scopeId(QUOTA_WILDCARD, QUOTA_WILDCARD))
    );
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
