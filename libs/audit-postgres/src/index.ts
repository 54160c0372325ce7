export { MIGRATIONS } from './migrations.js';
export { migrate, schemaVersion, SchemaTooNewError, type MigrateResult } from './migrate.js';
export { dayStart, dropExpiredPartitions, ensurePartitions, ensurePartitionsAhead, partitionName } from './partitions.js';
export { PgAuditRecords } from './pg-records.js';
export { PgAuditStore } from './pg-audit-store.js';
