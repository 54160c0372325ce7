import { ANALYTICS_KINDS } from './analytics/rollup-keys.js';
import { COVERAGE_KINDS } from './coverage/coverage-keys.js';
import { KIND } from './keys.js';

/**
 * Every kind of key the audit trail and its rollups keep in the state. The memory backend leaves
 * them out of state.memory_max_keys/bytes: the trail evicts by its own caps (audit.memory_max_*)
 * and the rollups are bounded by their retention, and refusing their writes would lose records.
 */
export const AUDIT_STATE_KINDS: readonly string[] = [...Object.values(KIND), ...ANALYTICS_KINDS, ...COVERAGE_KINDS];
