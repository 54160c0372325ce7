export { CoverageRollups, MAX_COVERAGE_DAYS, type CoverageRollupsOptions } from './coverage-rollups.js';
export { coverageReport, type LoadedRules } from './coverage-report.js';
export type { CoverageRecord, CoverageRollupQuery, CoverageRollupResult } from './types.js';
