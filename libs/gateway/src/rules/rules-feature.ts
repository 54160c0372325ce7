import type { RuleActionType } from '@sluice/rules';
import type { Feature, FeatureContext } from '../feature.js';
import type { DispatchContext } from '../pipeline/context.js';
import type { RuleActionHandler } from '../rule-actions/rule-action-handler.js';
import { rulesStage } from '../stages/rules-stage.js';
import { RuleRepository } from './rule-repository.js';

export interface RulesFeature extends Feature {
  readonly repository: RuleRepository;
}

export interface RulesInputs {
  /** Every other feature's rule actions (group, state_machine, ...), replacing the "not available" defaults. */
  ruleActions: Partial<Record<RuleActionType, RuleActionHandler>>;
  /** `state.current` of an action's event, for conditions. */
  currentState?: (ctx: DispatchContext) => Promise<string | undefined> | string | undefined;
}

/** Rules (files, API, enabled flags shared by replicas) and the pipeline stage that evaluates them and applies the matched action. */
export async function rulesFeature(ctx: FeatureContext, inputs: RulesInputs): Promise<RulesFeature> {
  const { state, clock, logger, metrics } = ctx;
  const repository = new RuleRepository({
    state,
    clock,
    directory: ctx.config.rules.directory,
    // Neither the plugin runtime nor an embedding provider exists yet: rules needing them fail to load, saying so.
    env: { wasmRuntime: false, embeddingProvider: false },
    logger,
    syncIntervalMs: ctx.config.rules.sync_interval_seconds * 1000,
  });
  await repository.start();
  return {
    name: 'rules',
    repository,
    stage: rulesStage({
      rules: repository,
      state,
      clock,
      logger,
      onRuleError: (rule) => metrics.ruleErrors.inc({ rule: rule.name }),
      handlers: inputs.ruleActions,
      ...(inputs.currentState ? { currentState: inputs.currentState } : {}),
    }),
    close: () => repository.close(),
  };
}
