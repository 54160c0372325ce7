export { AnalyticsRollups, MAX_ANALYTICS_BUCKETS, type AnalyticsRollupsOptions } from './analytics-rollups.js';
export { LATENCY_BOUNDS_MS, binOf } from './histogram.js';
export type { AnalyticsFilters, RollupQuery, RollupRecord } from './types.js';
