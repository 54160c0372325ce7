import { z } from 'zod';

/** What GET /v1/analytics computes. */
export const AnalyticsMetric = z.enum(['volume', 'outcome_breakdown', 'top_action_types', 'latency', 'error_rate']);
export type AnalyticsMetric = z.infer<typeof AnalyticsMetric>;

/** Buckets are aligned to UTC: the hour, the day, the ISO week (Monday), the calendar month. */
export const AnalyticsInterval = z.enum(['hourly', 'daily', 'weekly', 'monthly']);
export type AnalyticsInterval = z.infer<typeof AnalyticsInterval>;

/** A dimension buckets can be split by (`bucket.group` then holds its value). */
export const AnalyticsDimension = z.enum(['provider', 'action_type', 'outcome', 'namespace', 'tenant']);
export type AnalyticsDimension = z.infer<typeof AnalyticsDimension>;

const Filter = z.string().min(1).max(256);

/** Query string of GET /v1/analytics. */
export const AnalyticsQuery = z.object({
  metric: AnalyticsMetric,
  namespace: Filter.optional(),
  tenant: Filter.optional(),
  provider: Filter.optional(),
  action_type: Filter.optional(),
  outcome: Filter.optional(),
  interval: AnalyticsInterval.default('daily'),
  from: z.iso.datetime({ offset: true }).optional().describe('start (RFC 3339); default: 7 days before `to`. Rounded down to the UTC hour'),
  to: z.iso.datetime({ offset: true }).optional().describe('end (RFC 3339); default: now. Rounded up to the UTC hour'),
  group_by: AnalyticsDimension.optional().describe('split buckets by this dimension; outcome_breakdown defaults to outcome'),
  top_n: z.number().int().min(1).max(1000).default(10).describe('entries of top_entries (top_action_types)'),
});
export type AnalyticsQuery = z.infer<typeof AnalyticsQuery>;

/**
 * One time bucket (of one group). The spec's fields are always there, null where the metric does
 * not compute them; the percentiles (ours) only with latency.
 */
export const AnalyticsBucket = z.object({
  timestamp: z.string().describe('bucket start (RFC 3339, UTC)'),
  count: z.number().int(),
  group: z.string().nullable().describe('the group_by value; null without group_by'),
  avg_duration_ms: z.number().nullable().describe('latency; null for the other metrics'),
  p50_duration_ms: z.number().optional().describe('latency: upper bound of the histogram bin holding the 50th percentile'),
  p95_duration_ms: z.number().optional().describe('latency: as p50'),
  p99_duration_ms: z.number().optional().describe('latency: as p50'),
  error_rate: z.number().nullable().describe('error_rate: failed / count; null for the other metrics'),
});
export type AnalyticsBucket = z.infer<typeof AnalyticsBucket>;

export const AnalyticsTopEntry = z.object({
  label: z.string(),
  count: z.number().int(),
  percentage: z.number().describe('share of total_count, 0 to 100'),
});
export type AnalyticsTopEntry = z.infer<typeof AnalyticsTopEntry>;

export const AnalyticsResult = z.object({
  metric: AnalyticsMetric,
  interval: AnalyticsInterval,
  from: z.string(),
  to: z.string(),
  buckets: z.array(AnalyticsBucket).describe('non-empty buckets only, by timestamp then group'),
  top_entries: z.array(AnalyticsTopEntry).describe('top_action_types; empty for the other metrics'),
  total_count: z.number().int().describe('actions matching the filters in the range'),
});
export type AnalyticsResult = z.infer<typeof AnalyticsResult>;
