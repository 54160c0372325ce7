import type { AnalyticsDimension, AnalyticsInterval, AnalyticsMetric, AuditRecord } from '@sluice/core';

/** The fields of an audit record the rollups keep. */
export type RollupRecord = Pick<AuditRecord, 'namespace' | 'tenant' | 'provider' | 'action_type' | 'outcome' | 'dispatched_at' | 'duration_ms'>;

/** Exact-match filters of an analytics query. */
export interface AnalyticsFilters {
  namespace?: string | undefined;
  tenant?: string | undefined;
  provider?: string | undefined;
  action_type?: string | undefined;
  outcome?: string | undefined;
}

export interface RollupQuery extends AnalyticsFilters {
  metric: AnalyticsMetric;
  interval: AnalyticsInterval;
  /** Epoch ms; the range is widened to whole UTC hours (from rounded down, to rounded up, end exclusive). */
  fromMs: number;
  toMs: number;
  /** outcome_breakdown defaults to `outcome`; the other metrics to no grouping. */
  groupBy?: AnalyticsDimension | undefined;
  /** Entries of top_entries for top_action_types; default 10. */
  topN?: number | undefined;
  /** What the caller may see (grants); tuples it rejects are left out of every number. */
  visible?: ((namespace: string, tenant: string) => boolean) | undefined;
}
