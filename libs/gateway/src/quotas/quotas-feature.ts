import { OwnedSeries } from '@sluice/telemetry';
import type { FeatureContext, Feature } from '../feature.js';
import { quotaStage } from '../stages/quota-stage.js';
import { configQuotaPolicies } from './quota-config.js';
import { QuotaRepository } from './quota-repository.js';

export interface QuotasFeature extends Feature {
  readonly repository: QuotaRepository;
}

/** Checked before anything connects: duplicate ids or scope pairs in the config stop start-up, naming them. */
export function checkQuotasConfig(ctx: Pick<FeatureContext, 'config'>): void {
  configQuotaPolicies(ctx.config.quotas.policies);
}

/** Per-tenant quotas: config and API policies, and the first pipeline stage that counts against them. */
export async function quotasFeature(ctx: FeatureContext): Promise<QuotasFeature> {
  const { state, clock, logger, metrics } = ctx;
  const repository = new QuotaRepository({ state, clock, logger, policies: configQuotaPolicies(ctx.config.quotas.policies) });
  await repository.start();
  // A policy deleted takes its series with it, at the next new one.
  const exceeded = new OwnedSeries(
    metrics.quotaExceeded,
    (labels) => labels.policy ?? '',
    (policy) => repository.current.get(policy) !== undefined,
  );
  return {
    name: 'quotas',
    repository,
    stages: [
      quotaStage({
        quotas: repository,
        state,
        clock,
        logger,
        onExceeded: (policy, behavior) => exceeded.inc({ policy: policy.id, behavior }),
      }),
    ],
    close: () => repository.close(),
  };
}
