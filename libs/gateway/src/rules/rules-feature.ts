import { OwnedSeries } from '@sluice/telemetry';
import type { RuleActionType } from '@sluice/rules';
import type { Feature, FeatureContext } from '../feature.js';
import type { DispatchContext } from '../pipeline/context.js';
import type { RuleActionHandler } from '../rule-actions/rule-action-handler.js';
import { ruleActionStage, rulesStage } from '../stages/rules-stage.js';
import { RuleRepository, type RuleRepositoryDeps } from './rule-repository.js';

export interface RulesFeature extends Feature {
  readonly repository: RuleRepository;
}

export interface RulesInputs {
  /** Every other feature's rule actions (group, state_machine, ...), replacing the "not available" defaults. */
  ruleActions: Partial<Record<RuleActionType, RuleActionHandler>>;
  /** `state.current` of an action's event, for conditions. */
  currentState?: (ctx: DispatchContext) => Promise<string | undefined> | string | undefined;
  /** The time intervals, so rule load can report the names that do not exist. */
  intervals?: RuleRepositoryDeps['intervals'];
  /** The embedding service's similarity, when one is configured: `semantic_match` rules load only then. */
  similarity?: (topic: string, text: string) => Promise<number>;
  /** A WASM plugin's verdict, when plugins are configured: `wasm_plugin` rules load only then. */
  plugin?: (plugin: string, fn: string, ctx: DispatchContext) => Promise<boolean>;
  /** Re-reads the plugin directory on `POST /v1/rules/reload`. */
  reloadPlugins?: RuleRepositoryDeps['reloadPlugins'];
  /** Whether a plugin's function is loaded: rules that name one that is not are reported. */
  plugins?: RuleRepositoryDeps['plugins'];
}

/** Rules (files, API, enabled flags shared by replicas) and the two pipeline stages that evaluate them and, later, apply the matched action. */
export async function rulesFeature(ctx: FeatureContext, inputs: RulesInputs): Promise<RulesFeature> {
  const { state, clock, logger, metrics } = ctx;
  const repository = new RuleRepository({
    state,
    clock,
    directory: ctx.config.rules.directory,
    // Rules needing a runtime that is not configured fail to load, saying so.
    env: { wasmRuntime: inputs.plugin !== undefined, embeddingProvider: inputs.similarity !== undefined },
    logger,
    syncIntervalMs: ctx.config.rules.sync_interval_seconds * 1000,
    ...(inputs.intervals ? { intervals: inputs.intervals } : {}),
    ...(inputs.reloadPlugins ? { reloadPlugins: inputs.reloadPlugins } : {}),
    ...(inputs.plugins ? { plugins: inputs.plugins } : {}),
  });
  await repository.start();
  // A rule deleted (or renamed) takes its error series with it, at the next new one.
  const ruleErrors = new OwnedSeries(
    metrics.ruleErrors,
    (labels) => labels.rule ?? '',
    (rule) => repository.current.get(rule) !== undefined,
  );
  return {
    name: 'rules',
    repository,
    stages: [
      rulesStage({
        rules: repository,
        state,
        clock,
        logger,
        onRuleError: (rule) => ruleErrors.inc({ rule: rule.name }),
        requestMaxEvaluationMs: ctx.config.rules.request_max_evaluation_ms,
        ...(inputs.currentState ? { currentState: inputs.currentState } : {}),
        ...(inputs.similarity ? { similarity: inputs.similarity } : {}),
        ...(inputs.plugin ? { plugin: inputs.plugin } : {}),
      }),
      ruleActionStage({ state, clock, handlers: inputs.ruleActions }),
    ],
    close: () => repository.close(),
  };
}
