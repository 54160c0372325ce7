export { AnalyticsRollups } from './analytics-rollups.js';
export { LATENCY_BOUNDS_MS } from './histogram.js';
export type { RollupQuery, RollupRecord } from './types.js';
