import { compareCodeUnits } from '@sluice/core';
/** What quota and retention policies share: an id and the pair they govern. */
export interface ScopedPolicy {
  id: string;
  namespace: string;
  tenant: string;
}

export interface PolicyListOptions<T> {
  namespace?: string | undefined;
  tenant?: string | undefined;
  limit: number;
  offset: number;
  /** Keeps only the policies this returns true for (the caller's grants), before counting and paging. */
  visible?: (policy: T) => boolean;
}

/** By namespace, tenant, then id: the order every listing answers in. */
export function sortPolicies<T extends ScopedPolicy>(policies: Iterable<T>): T[] {
  return [...policies].sort((a, b) => compareCodeUnits(a.namespace, b.namespace) || compareCodeUnits(a.tenant, b.tenant) || compareCodeUnits(a.id, b.id));
}

/** Filters a sorted list by exact namespace and tenant and by visibility, then pages it; `count` is before paging. */
export function pagePolicies<T extends ScopedPolicy>(sorted: readonly T[], opts: PolicyListOptions<T>): { items: T[]; count: number } {
  const all = sorted.filter(
    (p) =>
      (opts.namespace === undefined || p.namespace === opts.namespace) &&
      (opts.tenant === undefined || p.tenant === opts.tenant) &&
      (opts.visible?.(p) ?? true),
  );
  return { items: all.slice(opts.offset, opts.offset + opts.limit), count: all.length };
}
