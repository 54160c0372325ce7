import type { SluiceConfig } from '@sluice/config';
import { loadPostgresTrail } from '@sluice/gateway';

/**
 * `sluice migrate`: the audit schema's missing migrations, then its partitions from yesterday to
 * `partitions_ahead_days` ahead. Safe to run from several processes at once (advisory locks).
 */
export async function migrateAudit(config: SluiceConfig, env: NodeJS.ProcessEnv) {
  const { migratePostgresTrail, openPostgresTrail } = await loadPostgresTrail();
  const trail = openPostgresTrail(config.audit.postgres, 'sluice-migrate', env);
  try {
    return await migratePostgresTrail(trail, Date.now());
  } finally {
    await trail.pool.end();
  }
}
