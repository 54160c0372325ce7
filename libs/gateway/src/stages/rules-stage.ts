import type { Clock, DispatchOutcome } from '@sluice/core';
import type { CompiledRule, EvalInput, RuleActionType } from '@sluice/rules';
import type { StateStore } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import type { DispatchContext } from '../pipeline/context.js';
import type { Stage } from '../pipeline/stage.js';
import type { RuleActionHandler } from '../rule-actions/rule-action-handler.js';
import { RULE_ACTION_HANDLERS } from '../rule-actions/handlers.js';
import type { RuleRepository } from '../rules/rule-repository.js';

export interface RulesStageDeps {
  rules: RuleRepository;
  state: StateStore;
  clock: Clock;
  logger: Logger;
  onRuleError?: (rule: CompiledRule) => void;
  /** Handlers of features wired at start-up (group, state_machine, ...), replacing the defaults. */
  handlers?: Partial<Record<RuleActionType, RuleActionHandler>>;
  /** The current lifecycle state of the action's event (`state.current` in conditions), if any; may answer synchronously. */
  currentState?: (ctx: DispatchContext) => Promise<string | undefined> | string | undefined;
}

/** What conditions see of a dispatch; `state.current` is the event's lifecycle state when there is one. */
function evalInputOf(ctx: DispatchContext, now: number, current?: string): EvalInput {
  const a = ctx.action;
  const action: EvalInput['action'] = {
    namespace: a.namespace,
    tenant: a.tenant,
    provider: a.provider,
    action_type: a.action_type,
    payload: a.payload,
    metadata: a.metadata,
    id: a.id,
  };
  // Assigned rather than spread in: same keys in the same order, without a spread's slow path per dispatch.
  if (a.dedup_key !== undefined) action.dedup_key = a.dedup_key;
  if (a.status !== undefined) action.status = a.status;
  if (a.fingerprint !== undefined) action.fingerprint = a.fingerprint;
  return { action, state: current === undefined ? {} : { current }, now };
}

/**
 * Evaluates the rules: the first match in priority order becomes the dispatch's decision. Its
 * action is applied later, by the rule-action stage, once guardrails, silences and time
 * intervals have had their say. A dry run records the verdict, matched rule and would-be
 * provider, and writes nothing. A rule whose condition errors is logged, counted and treated as
 * not matching.
 */
export function rulesStage(deps: RulesStageDeps): Stage {
  const log = deps.logger.child({ component: 'rules' });
  const onError = (rule: CompiledRule, err: unknown) => {
    deps.onRuleError?.(rule);
    log.warn({ rule: rule.name, err: err instanceof Error ? err.message : String(err) }, 'rule evaluation failed; treated as not matching');
  };
  return {
    name: 'rules',
    inDryRun: true,
    run(ctx: DispatchContext): Promise<undefined> | undefined {
      // No rules: nothing can match, so neither state.current nor the evaluation input is needed.
      if (deps.rules.current.size === 0) return undefined;
      const current = deps.currentState?.(ctx);
      return current instanceof Promise ? current.then((state) => decide(ctx, state)) : decide(ctx, current);
    },
  };

  function decide(ctx: DispatchContext, current: string | undefined): undefined {
    const decision = deps.rules.current.evaluate(evalInputOf(ctx, deps.clock.now(), current), deps.rules.isEnabled, onError);
    if (!decision) return undefined;
    ctx.decision = decision;
    ctx.verdict = decision.action.type;
    ctx.matchedRule = decision.rule.name;
    if (ctx.dryRun && decision.action.type === 'reroute') ctx.provider = decision.action.target_provider;
    return undefined;
  }
}

/** Applies the matched rule's action (never in a dry run): suppress, throttle, group... or let the action go on, changed or not. */
export function ruleActionStage(deps: Pick<RulesStageDeps, 'state' | 'clock' | 'handlers'>): Stage {
  const handlers = { ...RULE_ACTION_HANDLERS, ...deps.handlers };
  return {
    name: 'rule_action',
    inDryRun: false,
    run(ctx: DispatchContext): Promise<DispatchOutcome | undefined> | undefined {
      const decision = ctx.decision;
      return decision ? handlers[decision.action.type](ctx, decision, deps) : undefined;
    },
  };
}
