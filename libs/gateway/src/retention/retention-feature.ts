import type { AuditExpiry, RetentionSource } from './retention-source.js';
import { type Feature, type FeatureContext, redeclared } from '../feature.js';
import { RetentionReaper } from './retention-reaper.js';
import { RetentionRepository } from './retention-repository.js';
import { RETENTION_REAP_KIND, scheduleRetentionReaper } from './retention-schedule.js';

export interface RetentionPoliciesFeature extends Feature {
  readonly repository: RetentionRepository;
}

/** Retention policies (per-tenant TTLs and compliance holds): read by audit on every record, so built before it. */
export async function retentionPoliciesFeature(ctx: FeatureContext): Promise<RetentionPoliciesFeature> {
  const repository = new RetentionRepository({ state: ctx.state, clock: ctx.clock, logger: ctx.logger });
  await repository.start();
  return { name: 'retention-policies', repository, close: () => repository.close() };
}

export interface RetentionReaperFeature extends Feature {
  readonly reaper: RetentionReaper;
}

export interface ReaperInputs {
  policies: RetentionRepository;
  /** The audit store's expiry; absent while audit is off. */
  audit: AuditExpiry | undefined;
  immutableAudit: boolean;
  /** Every other feature's retention sources. */
  sources: readonly RetentionSource[];
}

/** The retention reaper: one repeatable job per deployment deletes what the policies' TTLs have passed. */
export function retentionReaperFeature(ctx: FeatureContext, inputs: ReaperInputs): RetentionReaperFeature {
  const reaper = new RetentionReaper({
    retention: inputs.policies,
    clock: ctx.clock,
    logger: ctx.logger,
    metrics: ctx.metrics,
    audit: inputs.audit,
    immutableAudit: inputs.immutableAudit,
    sources: inputs.sources,
  });
  return {
    name: 'retention-reaper',
    reaper,
    jobs: { [RETENTION_REAP_KIND]: { concurrency: 1, handler: async () => void (await reaper.runCycle()) } },
    declareSchedules: () => scheduleRetentionReaper(ctx.scheduler, ctx.config.background),
    repairSchedules: redeclared((onlyIfUnchanged) => scheduleRetentionReaper(ctx.scheduler, ctx.config.background, onlyIfUnchanged)),
  };
}
