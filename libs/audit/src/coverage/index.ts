export { CoverageRollups } from './coverage-rollups.js';
export { coverageReport } from './coverage-report.js';
export type { CoverageRecord, CoverageRollupQuery, CoverageRollupResult } from './types.js';
export type { CoverageTuple } from './coverage-keys.js';
export { combinedCoverageSource, stateCoverageSource, type CoverageSource } from './coverage-reader.js';
