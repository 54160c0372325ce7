import type { QuotaPolicy } from '@sluice/core';
import { scopeMember } from '@sluice/state';
import { sortPolicies } from '../policies/policy-listing.js';

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
      if (p.enabled) this.byScope.set(scopeMember(p), p);
    }
    this.sorted = sortPolicies(this.byId.values());
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
      this.byScope.get(scopeMember({ namespace, tenant })) ??
      this.byScope.get(scopeMember({ namespace: QUOTA_WILDCARD, tenant })) ??
      this.byScope.get(scopeMember({ namespace, tenant: QUOTA_WILDCARD })) ??
      this.byScope.get(scopeMember({ namespace: QUOTA_WILDCARD, tenant: QUOTA_WILDCARD }))
    );
  }
}
