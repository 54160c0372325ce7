import type { AuditFilterField } from '@sluice/core';
import type { StateStore } from '@sluice/state';
import {
  GLOBAL_DIMENSIONS,
  TENANT_DIMENSIONS,
  globalAllIndex,
  globalDimensionIndex,
  tenantAllIndex,
  tenantDimensionIndex,
  type TimeIndex,
} from './index-layout.js';

/** The exact-match filters of a query that are present. */
export type Filters = Partial<Record<AuditFilterField, string>>;

export interface QueryPlan {
  /** The index to walk. */
  index: TimeIndex;
  /** Membership in the index alone satisfies every filter. */
  coversAll: boolean;
  /** Entries of `index` within the window, when it was counted. */
  count: number | null;
}

/**
 * Picks the index to walk: the smallest (by indexCount over the window) of the candidates that
 * are not dominated by another candidate. With namespace and tenant given, the tenant's compound
 * index of outcome/provider/action_type beats the tenant index and that dimension's global index,
 * and the tenant index beats the global namespace and tenant indexes. Ties go to the index that
 * covers more filters. One candidate needs no count unless `countAlways` asks for it (total).
 */
export async function planQuery(store: StateStore, filters: Filters, window: { fromMs?: number; toMs?: number }, countAlways: boolean): Promise<QueryPlan> {
  const fields = (Object.keys(filters) as AuditFilterField[]).filter((f) => filters[f] !== undefined);
  const candidates = candidateIndexes(filters, store.sharded);
  const covers = (index: TimeIndex) => fields.every((f) => index.covers.includes(f));
  const only = candidates.length === 1 ? candidates[0] : undefined;
  if (only !== undefined) {
    const count = countAlways ? await countEntries(store, only, window) : null;
    return { index: only, coversAll: covers(only), count };
  }
  const counts = await Promise.all(candidates.map((c) => countEntries(store, c, window)));
  let best = 0;
  for (let i = 1; i < candidates.length; i++) {
    const [count, bestCount] = [counts[i] ?? Infinity, counts[best] ?? Infinity];
    const wider = (candidates[i]?.covers.length ?? 0) > (candidates[best]?.covers.length ?? 0);
    if (count < bestCount || (count === bestCount && wider)) best = i;
  }
  const index = candidates[best] ?? globalAllIndex(store.sharded);
  return { index, coversAll: covers(index), count: counts[best] ?? null };
}

/** Entries within the window, over the index's shards. */
async function countEntries(store: StateStore, index: TimeIndex, window: { fromMs?: number; toMs?: number }): Promise<number> {
  const counts = await Promise.all(index.keys.map((key) => store.indexCount(key, window.fromMs, window.toMs)));
  return counts.reduce((a, b) => a + b, 0);
}

/** The non-dominated indexes for these filters; the global index when there are none. */
function candidateIndexes(filters: Filters, sharded: boolean): TimeIndex[] {
  const { namespace, tenant } = filters;
  const scope = namespace !== undefined && tenant !== undefined ? { namespace, tenant } : null;
  const out: TimeIndex[] = [];
  const compounded = new Set<AuditFilterField>();
  if (scope !== null) {
    compounded.add('namespace').add('tenant');
    for (const field of TENANT_DIMENSIONS) {
      const value = filters[field];
      if (value === undefined) continue;
      out.push(tenantDimensionIndex(scope, field, value));
      compounded.add(field);
    }
    if (out.length === 0) out.push(tenantAllIndex(scope));
  }
  for (const field of GLOBAL_DIMENSIONS) {
    const value = filters[field];
    if (value !== undefined && !compounded.has(field)) out.push(globalDimensionIndex(field, value, sharded));
  }
  return out.length > 0 ? out : [globalAllIndex(sharded)];
}
