import type { QuotaPolicy } from '@sluice/core';
import { ConfigError, type QuotaPolicyConfig } from '@sluice/config';
import { scopeMember } from '@sluice/state';

/**
 * The policies of `quotas.policies`, checked for what the schema cannot see: a repeated id, or
 * two policies for one (namespace, tenant) pair (matching needs at most one per pair). Called
 * before anything connects, so a bad file stops start-up with a message naming the entries.
 */
export function configQuotaPolicies(entries: readonly QuotaPolicyConfig[]): QuotaPolicy[] {
  const problems: string[] = [];
  const ids = new Map<string, number>();
  const scopes = new Map<string, number>();
  entries.forEach((e, i) => {
    const sameId = ids.get(e.id);
    if (sameId !== undefined) problems.push(`  - quotas.policies.${i}.id: duplicate id "${e.id}" (also quotas.policies.${sameId})`);
    else ids.set(e.id, i);
    const scope = scopeMember(e);
    const sameScope = scopes.get(scope);
    if (sameScope !== undefined) {
      problems.push(
        `  - quotas.policies.${i}: policies "${entries[sameScope]?.id}" and "${e.id}" both apply to namespace "${e.namespace}", tenant "${e.tenant}" (one policy per pair)`,
      );
    } else scopes.set(scope, i);
  });
  if (problems.length > 0) throw new ConfigError(`invalid configuration (quotas):\n${problems.join('\n')}`);
  return entries.map((e) => ({
    id: e.id,
    namespace: e.namespace,
    tenant: e.tenant,
    max_actions: e.max_actions,
    window: e.window,
    overage_behavior: e.overage_behavior,
    enabled: e.enabled,
    ...(e.description !== undefined ? { description: e.description } : {}),
    source: 'config' as const,
  }));
}
