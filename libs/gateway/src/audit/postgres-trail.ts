import { checkSchema, ensurePartitionsAhead, migrate } from '@sluice/audit-postgres';
import { configSecret } from '@sluice/auth';
import { ConfigError, type SluiceConfig } from '@sluice/config';
import type { Logger } from '@sluice/telemetry';
import pg from 'pg';

export { PgAuditStore } from '@sluice/audit-postgres';

type PostgresConfig = SluiceConfig['audit']['postgres'];

const CONNECT_TIMEOUT_MS = 10_000;

/** The PostgreSQL database of the audit trail, as one process uses it. */
export interface PostgresTrail {
  pool: pg.Pool;
  schema: string;
  partitionsAheadDays: number;
}

/** A pool on the configured database; the URL from the config (plain or ENC[...]) or the variable url_env names. */
export function openPostgresTrail(
  cfg: PostgresConfig,
  applicationName: string,
  env: NodeJS.ProcessEnv = process.env,
  onIdleError: (err: Error) => void = () => {},
): PostgresTrail {
  const url = configSecret(cfg.url, cfg.url_env, 'audit.postgres.url_env', env);
  if (url === undefined) throw new ConfigError('the PostgreSQL audit trail needs audit.postgres.url (or url_env)');
  // A database that does not answer fails a batch (retried) instead of holding it for ever.
  const pool = new pg.Pool({ connectionString: url, max: cfg.pool_size, application_name: applicationName, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // An idle connection cut by the server (a restart, a failover) is an 'error' event, fatal unless
  // listened to; the pool drops that connection and opens another when next asked.
  pool.on('error', onIdleError);
  return { pool, schema: cfg.schema, partitionsAheadDays: cfg.partitions_ahead_days };
}

/**
 * Processes that migrate (workers, `sluice serve`, `sluice migrate`): the missing migrations under
 * the advisory lock, then the partitions from yesterday to partitions_ahead_days ahead.
 */
export async function migratePostgresTrail(trail: PostgresTrail, nowMs: number) {
  const result = await migrate(trail.pool, trail.schema);
  const created = await ensurePartitionsAhead(trail.pool, trail.schema, nowMs, trail.partitionsAheadDays);
  return { schema: trail.schema, ...result, partitions_created: created };
}

/**
 * API replicas do not migrate: they refuse a schema newer than this release (SchemaTooNewError,
 * the process does not start) and warn about an older one, which a worker brings up.
 */
export async function checkPostgresTrail(trail: PostgresTrail, logger: Logger): Promise<void> {
  const { found, known } = await checkSchema(trail.pool, trail.schema);
  if (found < known) {
    logger.warn({ schema: trail.schema, found, known }, 'audit schema not migrated to this release yet: a worker (or sluice migrate) migrates it');
  }
}
