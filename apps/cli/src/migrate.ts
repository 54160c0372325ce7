import { ensurePartitionsAhead, migrate, type MigrateResult } from '@sluice/audit-postgres';
import { configSecret } from '@sluice/auth';
import { ConfigError, type SluiceConfig } from '@sluice/config';
import pg from 'pg';

export interface MigrateOutcome extends MigrateResult {
  schema: string;
  /** Daily partitions this run created (from yesterday to partitions_ahead_days ahead). */
  partitions_created: string[];
}

/**
 * `sluice migrate`: the audit schema's missing migrations, then its partitions from yesterday to
 * `partitions_ahead_days` ahead. Safe to run from several processes at once (advisory locks).
 */
export async function migrateAudit(config: SluiceConfig, env: NodeJS.ProcessEnv): Promise<MigrateOutcome> {
  const cfg = config.audit.postgres;
  const url = configSecret(cfg.url, cfg.url_env, 'audit.postgres.url_env', env);
  if (url === undefined) throw new ConfigError('sluice migrate needs audit.postgres.url (or url_env): the PostgreSQL database of the audit trail');
  const pool = new pg.Pool({ connectionString: url, max: 2, application_name: 'sluice-migrate' });
  try {
    const result = await migrate(pool, cfg.schema);
    const created = await ensurePartitionsAhead(pool, cfg.schema, Date.now(), cfg.partitions_ahead_days);
    return { schema: cfg.schema, ...result, partitions_created: created };
  } finally {
    await pool.end();
  }
}
