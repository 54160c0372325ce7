import { longestProviderCallSeconds, type SluiceConfig } from '@sluice/config';
import { type Feature, type FeatureContext, redeclared } from '../feature.js';
import type { RetentionRepository } from '../retention/retention-repository.js';
import { ActionIntents } from './action-intents.js';
import type { AuditRecorder } from './audit-recorder.js';
import { createAudit, type AuditParts } from './create-audit.js';
import { loadPostgresTrail } from './load-postgres-trail.js';

/** The job kind (a durable BullMQ queue name: never rename) and schedule of the intent sweeper. */
const INTENT_SWEEP_KIND = 'intent-sweep';
const INTENT_SWEEP_SCHEDULE_ID = 'intent-sweeper';
const INTENTS_PER_SWEEP = 500;

export interface AuditFeature extends Feature {
  readonly parts: AuditParts;
  /** Null unless audit is on and state is shared (Redis): in one process, a crash loses everything anyway. */
  readonly intents: ActionIntents | null;
}

/**
 * How long after a provider call starts its intent is given up on: every attempt timing out,
 * with the longest backoff between them, plus a margin for the record's own write.
 */
function intentGraceMs(config: SluiceConfig): number {
  if (config.audit.unknown_after_seconds !== undefined) return config.audit.unknown_after_seconds * 1000;
  return longestProviderCallSeconds(config.executor) * 1000 + 30_000;
}

/** The audit trail, its analytics and coverage rollups, the recorder the gateway writes each dispatch through, and the intents of provider calls in flight. */
export async function auditFeature(ctx: FeatureContext, retention: RetentionRepository): Promise<AuditFeature> {
  const parts = await createAudit(ctx.config, { ...ctx, retention });
  const { recorder, store, postgres } = parts;
  if (!recorder || !store) return { name: 'audit', parts, intents: null };
  // The spool first (its records go through the ingest), then the ingest, then its database.
  const close = async () => {
    await recorder.close();
    await store.close();
    await postgres?.pool.end();
  };
  // Every process checks the PostgreSQL schema (a newer one stops it here); those that run jobs migrate it.
  // With a trail, its module is loaded already: createAudit opened the trail with it.
  if (postgres !== null) {
    const { checkPostgresTrail } = await loadPostgresTrail();
    await checkPostgresTrail(postgres, ctx.logger.child({ component: 'audit' })).catch(async (err: unknown) => {
      await postgres.pool.end();
      throw err;
    });
  }
  const migrateTrail = async () => {
    if (postgres === null) return;
    const { migratePostgresTrail } = await loadPostgresTrail();
    await migratePostgresTrail(postgres, ctx.clock.now());
  };
  if (ctx.state.backend === 'memory') return { name: 'audit', parts, intents: null, close, declareSchedules: migrateTrail };
  const declareIntentSweep = (onlyIfUnchanged = false) =>
    ctx.scheduler.repeat(INTENT_SWEEP_KIND, {
      id: INTENT_SWEEP_SCHEDULE_ID,
      everyMs: ctx.config.background.intent_sweep_interval_seconds * 1000,
      onlyIfUnchanged,
    });
  const intents = new ActionIntents({
    state: ctx.state,
    clock: ctx.clock,
    graceMs: intentGraceMs(ctx.config),
    // Records remove their intents when indexed: index what is queued first, or settled intents
    // look due; if that cannot finish (indexing far behind), sweeping waits for the next round.
    beforeSweep: async () => {
      const indexed = await store.catchUp();
      if (!indexed) ctx.logger.child({ component: 'audit' }).warn('audit indexing is behind; intent sweep skipped');
      return indexed;
    },
  });
  const log = ctx.logger.child({ component: 'audit' });
  return {
    name: 'audit',
    parts,
    intents,
    close,
    jobs: {
      [INTENT_SWEEP_KIND]: {
        concurrency: 1,
        handler: async () => {
          const settled = await intents.sweep(INTENTS_PER_SWEEP, (intent) => (recorder as AuditRecorder).recordUnknown(intent));
          if (settled > 0) log.warn({ settled }, 'provider calls whose process died before recording them: unknown records written');
        },
      },
    },
    startBackground: () => store.startIndexer(),
    declareSchedules: async () => {
      await migrateTrail();
      await declareIntentSweep();
    },
    repairSchedules: redeclared(declareIntentSweep),
  };
}
