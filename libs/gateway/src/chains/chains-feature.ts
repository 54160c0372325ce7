import type { Feature, FeatureContext } from '../feature.js';
import { ChainDefinitions } from './chain-definitions.js';

export interface ChainsFeature extends Feature {
  readonly definitions: ChainDefinitions;
}

/** Chains: their definitions (config and API, shared by replicas). Runs, and the `chain` rule action, arrive next. */
export async function chainsFeature(ctx: FeatureContext): Promise<ChainsFeature> {
  const definitions = new ChainDefinitions({
    state: ctx.state,
    clock: ctx.clock,
    logger: ctx.logger,
    configured: ctx.config.chains.definitions,
    providerExists: (name) => ctx.providers.has(name),
    syncIntervalMs: ctx.config.rules.sync_interval_seconds * 1000,
  });
  await definitions.start();
  return { name: 'chains', definitions, close: () => definitions.close() };
}
