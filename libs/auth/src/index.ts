export * from './encrypted-values.js';
export * from './roles.js';
export * from './grants.js';
export * from './caller.js';
export * from './auth-logger.js';
export { actionRecordFilter, seesEverything, tenantFilterFor, visibleTo } from './list-scope.js';
export { loadAuth } from './load-auth.js';
// Authentication (argon2, jose) loads on demand: its values are in `@sluice/auth/authentication`
// (and behind loadAuth); only its types are re-exported here.
export type * from './authentication.js';
