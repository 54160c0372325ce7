export * from './audit-record.js';
export * from './audit-recorder.js';
export * from './compliance.js';
export * from './redact.js';
export * from './create-audit.js';
export { loadPostgresTrail } from './load-postgres-trail.js';
