import type { RuleAction } from '@sluice/rules';
import type { DeadLetterQueue } from '../dead-letters/dead-letter-queue.js';
import { reachableSubChains } from './chain-checks.js';
import type { Feature, FeatureContext } from '../feature.js';
import type { RuleActionHandler } from '../rule-actions/rule-action-handler.js';
import { ChainDefinitions } from './chain-definitions.js';
import { CHAIN_STEP_KIND, CHAIN_TIMEOUT_KIND } from './chain-jobs.js';
import { ChainRunRetention } from './chain-retention.js';
import { ChainRuns, type StepExecutor } from './chain-runs.js';

export interface ChainsFeature extends Feature {
  readonly definitions: ChainDefinitions;
  readonly runs: ChainRuns;
}

type ChainAction = Extract<RuleAction, { type: 'chain' }>;

/**
 * Chains: definitions (config and API, shared by replicas), the `chain` rule action starting a
 * run, step and timeout jobs advancing runs on any worker, and retention of finished runs.
 */
export async function chainsFeature(ctx: FeatureContext, deadLetters: DeadLetterQueue | null): Promise<ChainsFeature> {
  const definitions = new ChainDefinitions({
    state: ctx.state,
    clock: ctx.clock,
    logger: ctx.logger,
    configured: ctx.config.chains.definitions,
    providerExists: (name) => ctx.providers.has(name),
    syncIntervalMs: ctx.config.rules.sync_interval_seconds * 1000,
  });
  await definitions.start();
  const runs = new ChainRuns({
    state: ctx.state,
    clock: ctx.clock,
    logger: ctx.logger,
    scheduler: ctx.scheduler,
    events: ctx.events,
    definitions,
    maxOutputBytes: ctx.config.chains.max_output_bytes,
    ...(deadLetters ? { deadLetter: (action, provider, error) => deadLetters.push(action, provider, error) } : {}),
  });
  const chain: RuleActionHandler = async (dispatch, { rule, action }) => {
    const name = (action as ChainAction).chain_name;
    const def = definitions.find(name);
    if (!def) {
      const message = `rule ${rule.name}: chain definition ${name} not found`;
      return { outcome: 'failed', action_id: dispatch.action.id, error: { code: 'CHAIN_NOT_FOUND', message, retryable: false, attempts: 0 } };
    }
    const reach = reachableSubChains(def, (sub) => definitions.find(sub));
    if ('cycle' in reach) {
      // Only definitions written at once on two replicas get here: each write alone is checked for cycles.
      const message = `rule ${rule.name}: chain ${name} reaches itself through sub-chains (${reach.cycle.join(' → ')}); fix the definitions`;
      return { outcome: 'failed', action_id: dispatch.action.id, error: { code: 'CONFIGURATION', message, retryable: false, attempts: 0 } };
    }
    const started = await runs.start(def, reach.subChains, { action: dispatch.action, rule: rule.name });
    dispatch.chainId = started.chainId;
    return started.outcome;
  };
  return {
    name: 'chains',
    definitions,
    runs,
    ruleActions: { chain },
    jobs: {
      [CHAIN_STEP_KIND]: {
        concurrency: 8,
        handler: (job, { gateway }) => {
          const execute: StepExecutor = (stepAction, chainId) =>
            gateway.dispatch(stepAction, { stagesFrom: 'execute', deadLetter: false, chainId, caller: { id: `chain:${chainId}`, method: 'chain' } });
          return runs.onStepJob(job, execute);
        },
      },
      [CHAIN_TIMEOUT_KIND]: { concurrency: 2, handler: (job) => runs.onTimeoutJob(job.data) },
    },
    retentionSources: [new ChainRunRetention(runs, ctx.logger)],
    close: () => definitions.close(),
  };
}
