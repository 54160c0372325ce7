import type { Clock, RetentionPolicy } from '@sluice/core';
import type { Logger } from '@sluice/telemetry';
import type { RetentionIndex } from './retention-index.js';
import { NOTHING_REAPED, type AuditExpiry, type ReapResult, type RetentionSource } from './retention-source.js';

/** Where the counters go (the telemetry Metrics implements it). `source` is a source name, `audit` or `policies`. */
interface RetentionMetrics {
  recordRetention(source: string, counts: ReapResult): void;
}

export interface RetentionReaperDeps {
  /** The shared policies: reloaded at the start of every cycle, read again before each policy. */
  retention: { reload(): Promise<void>; readonly current: RetentionIndex };
  clock: Clock;
  logger: Logger;
  metrics: RetentionMetrics;
  /** The audit store's expiry; absent while audit is off (or the store cannot expire). */
  audit?: AuditExpiry | undefined;
  /** Immutable audit: the reaper never deletes an audit record, whatever its expires_at says. */
  immutableAudit: boolean;
  sources?: readonly RetentionSource[];
  /** Audit records deleted per expire() call (default 1000). */
  auditBatchSize?: number;
  /** expire() calls per cycle at most (default 1000); a larger backlog is left to the next cycle. */
  maxAuditBatches?: number;
}

export interface ReapSummary extends ReapResult {
  /** Enabled policies without compliance hold that the sources were run for. */
  policies: number;
  /** Audit records deleted (also counted in `deleted`). */
  auditExpired: number;
}

/** The `source` label of what the reaper counts itself: held policies skipped, a failed policy reload. */
const POLICIES_SOURCE = 'policies';
const AUDIT_SOURCE = 'audit';

/**
 * One retention cycle: reload the policies, run every registered source for each enabled policy
 * that has no compliance hold, then expire audit records in bounded batches. A failing source
 * or batch is logged and counted and the cycle goes on; only a failed policy reload fails the
 * cycle, because reaping with stale policies could delete data of a tenant just put on hold.
 */
export class RetentionReaper {
  private readonly sources = new Map<string, RetentionSource>();
  private readonly log: Logger;
  private readonly batchSize: number;
  private readonly maxBatches: number;

  constructor(private readonly deps: RetentionReaperDeps) {
    this.log = deps.logger.child({ component: 'retention-reaper' });
    this.batchSize = deps.auditBatchSize ?? 1000;
    this.maxBatches = deps.maxAuditBatches ?? 1000;
    for (const source of deps.sources ?? []) this.register(source);
  }

  /** Adds a source (chains, events, ...); names are unique because they label the counters. */
  register(source: RetentionSource): void {
    if (source.name === AUDIT_SOURCE || source.name === POLICIES_SOURCE || this.sources.has(source.name)) {
      throw new Error(`retention source name ${JSON.stringify(source.name)} is already taken`);
    }
    this.sources.set(source.name, source);
  }

  async runCycle(): Promise<ReapSummary> {
    const nowMs = this.deps.clock.now();
    const summary: ReapSummary = { ...NOTHING_REAPED, policies: 0, auditExpired: 0 };
    const add = (source: string, result: ReapResult) => {
      this.deps.metrics.recordRetention(source, result);
      summary.deleted += result.deleted;
      summary.skippedCompliance += result.skippedCompliance;
      summary.errors += result.errors;
    };
    try {
      await this.deps.retention.reload();
    } catch (err) {
      add(POLICIES_SOURCE, { ...NOTHING_REAPED, errors: 1 });
      throw err;
    }
    for (const listed of this.deps.retention.current.list()) {
      // The snapshot may have moved on during the cycle (pub/sub): a hold placed meanwhile still counts.
      const policy = this.deps.retention.current.get(listed.id);
      if (!policy?.enabled) continue;
      if (policy.compliance_hold) {
        add(POLICIES_SOURCE, { ...NOTHING_REAPED, skippedCompliance: 1 });
        continue;
      }
      summary.policies += 1;
      for (const source of this.sources.values()) add(source.name, await this.reap(source, policy, nowMs));
    }
    const audit = await this.expireAudit(nowMs);
    add(AUDIT_SOURCE, audit);
    summary.auditExpired = audit.deleted;
    this.log.info(summary, 'retention cycle done');
    return summary;
  }

  private async reap(source: RetentionSource, policy: RetentionPolicy, nowMs: number): Promise<ReapResult> {
    try {
      return await source.reap({ policy, nowMs });
    } catch (err) {
      this.log.error({ err, source: source.name, namespace: policy.namespace, tenant: policy.tenant }, 'retention source failed');
      return { ...NOTHING_REAPED, errors: 1 };
    }
  }

  /** Deletes expired audit records batch by batch until a short batch says none are left (or the cap). */
  private async expireAudit(nowMs: number): Promise<ReapResult> {
    const { audit, immutableAudit } = this.deps;
    if (!audit || immutableAudit) return NOTHING_REAPED;
    let deleted = 0;
    try {
      for (let batch = 0; batch < this.maxBatches; batch++) {
        const n = await audit.expire(nowMs, this.batchSize);
        deleted += n;
        if (n < this.batchSize) return { ...NOTHING_REAPED, deleted };
      }
      this.log.warn({ deleted }, 'audit expiry reached its per-cycle cap; the rest goes in the next cycle');
      return { ...NOTHING_REAPED, deleted };
    } catch (err) {
      this.log.error({ err, deleted }, 'audit expiry failed');
      return { ...NOTHING_REAPED, deleted, errors: 1 };
    }
  }
}
