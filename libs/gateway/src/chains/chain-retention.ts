import type { Logger } from '@sluice/telemetry';
import { NOTHING_REAPED, type ReapContext, type ReapResult, type RetentionSource } from '../retention/retention-source.js';
import type { ChainRuns } from './chain-runs.js';

/** Finished chain runs (completed, failed, cancelled) older than a policy's state_ttl_seconds; running ones are never touched. */
export class ChainRunRetention implements RetentionSource {
  readonly name = 'chains';

  constructor(
    private readonly runs: ChainRuns,
    private readonly log: Logger,
  ) {}

  async reap({ policy, nowMs }: ReapContext): Promise<ReapResult> {
    if (policy.state_ttl_seconds === undefined) return NOTHING_REAPED;
    try {
      return { ...NOTHING_REAPED, deleted: await this.runs.reapFinished(policy.namespace, policy.tenant, nowMs - policy.state_ttl_seconds * 1000) };
    } catch (err) {
      this.log.warn({ err, namespace: policy.namespace, tenant: policy.tenant }, 'chain run retention failed for a tenant');
      return { ...NOTHING_REAPED, errors: 1 };
    }
  }
}
