export { AnalyticsRollups, rollupRetentionMs } from './analytics-rollups.js';
export { binOf } from './histogram.js';
export type { Segment } from './read-plan.js';
export { tupleRef as analyticsTupleRef, type Tuple as AnalyticsTuple, type TupleRef as AnalyticsTupleRef } from './rollup-keys.js';
export { combinedRollupSource, stateRollupSource, type CellCount, type RollupRead, type RollupSource, type TupleSum } from './rollup-reader.js';
export { LATENCY_BOUNDS_MS } from './histogram.js';
export type { RollupQuery, RollupRecord } from './types.js';
