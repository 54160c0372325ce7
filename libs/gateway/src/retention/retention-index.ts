import type { RetentionPolicy } from '@sluice/core';
import { scopeMember } from '@sluice/state';
import { sortPolicies } from '../policies/policy-listing.js';

/**
 * An immutable snapshot of the retention policies one replica knows, swapped whole on every
 * reload so a reader never sees half of one. Lookups are by id and by exact (namespace, tenant)
 * pair: a retention policy has no wildcards and does not cover sub-tenants.
 */
export class RetentionIndex {
  private readonly byId = new Map<string, RetentionPolicy>();
  private readonly byPair = new Map<string, RetentionPolicy>();
  private readonly sorted: readonly RetentionPolicy[];

  constructor(policies: readonly RetentionPolicy[]) {
    for (const p of policies) {
      this.byId.set(p.id, p);
      this.byPair.set(scopeMember(p), p);
    }
    this.sorted = sortPolicies(this.byId.values());
  }

  get(id: string): RetentionPolicy | undefined {
    return this.byId.get(id);
  }

  /** The pair's policy, enabled or not. */
  forScope(namespace: string, tenant: string): RetentionPolicy | undefined {
    if (this.byPair.size === 0) return undefined; // the common case: no policies, no key to build per audit record
    return this.byPair.get(scopeMember({ namespace, tenant }));
  }

  /** Every policy, by namespace, tenant, id. */
  list(): readonly RetentionPolicy[] {
    return this.sorted;
  }
}
