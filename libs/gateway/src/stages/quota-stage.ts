import type { Clock, DispatchOutcome, QuotaOverage, QuotaPolicy } from '@sluice/core';
import type { StateStore } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import type { DispatchContext } from '../pipeline/context.js';
import type { Stage } from '../pipeline/stage.js';
import { consumeQuota } from '../quotas/quota-counter.js';

export interface QuotaStageDeps {
  /** The policy governing a namespace and tenant (the QuotaRepository). */
  quotas: { match(namespace: string, tenant: string): QuotaPolicy | undefined };
  state: StateStore;
  clock: Clock;
  logger: Logger;
  /** An action over its quota: blocked (block) or executed anyway (warn). */
  onExceeded?: (policy: QuotaPolicy, behavior: QuotaOverage) => void;
}

/**
 * First stage: counts the action against its tenant's quota policy, before any rule, so an
 * over-quota tenant is blocked whatever the rules say. A blocked attempt is not counted. Not run
 * for dry runs (they consume nothing). Admitted actions count whatever later stages decide.
 */
export function quotaStage(deps: QuotaStageDeps): Stage {
  const log = deps.logger.child({ component: 'quotas' });
  return {
    name: 'quota',
    inDryRun: false,
    run(ctx: DispatchContext): Promise<DispatchOutcome | undefined> | undefined {
      const policy = deps.quotas.match(ctx.action.namespace, ctx.action.tenant);
      // No policy: answered synchronously, saving the pipeline an await.
      return policy ? consume(ctx, policy) : undefined;
    },
    idle: (ctx) => deps.quotas.match(ctx.action.namespace, ctx.action.tenant) === undefined,
  };

  async function consume(ctx: DispatchContext, policy: QuotaPolicy): Promise<DispatchOutcome | undefined> {
    const { namespace, tenant, id } = ctx.action;
    const now = deps.clock.now();
    const { allowed, used, endMs } = await consumeQuota(deps.state, policy, namespace, tenant, now);
    if (allowed) {
      if (used > policy.max_actions) {
        deps.onExceeded?.(policy, 'warn');
        log.warn(
          { policy: policy.id, namespace, tenant, used, limit: policy.max_actions, action_id: id },
          'quota exceeded; executing anyway (overage_behavior warn)',
        );
      }
      return undefined;
    }
    deps.onExceeded?.(policy, 'block');
    return {
      outcome: 'throttled',
      action_id: id,
      reason: 'quota_exceeded',
      quota: { id: policy.id, limit: policy.max_actions, used, window: policy.window, resets_at: new Date(endMs).toISOString() },
      retry_after_seconds: Math.max(1, Math.ceil((endMs - now) / 1000)),
    };
  }
}
