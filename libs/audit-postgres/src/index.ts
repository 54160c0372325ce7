export { MIGRATIONS } from './migrations.js';
export { checkSchema, migrate, schemaVersion, SchemaTooNewError } from './migrate.js';
export { dayStart, dropExpiredPartitions, ensurePartitions, ensurePartitionsAhead, partitionName } from './partitions.js';
export { PgAuditRecords } from './pg-records.js';
export { PgAuditStore, type PgAuditStoreOptions } from './pg-audit-store.js';
