import type { Clock, DispatchOutcome } from '@sluice/core';
import type { CompiledRule, EvalInput } from '@sluice/rules';
import type { StateStore } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import type { DispatchContext } from '../pipeline/context.js';
import type { Stage } from '../pipeline/stage.js';
import { RULE_ACTION_HANDLERS } from '../rule-actions/handlers.js';
import type { RuleRepository } from '../rules/rule-repository.js';

export interface RulesStageDeps {
  rules: RuleRepository;
  state: StateStore;
  clock: Clock;
  logger: Logger;
  onRuleError?: (rule: CompiledRule) => void;
}

/** What conditions see of a dispatch. `state.current` is filled by event lifecycles once they exist. */
export function evalInputOf(ctx: DispatchContext, now: number): EvalInput {
  const a = ctx.action;
  return {
    action: {
      namespace: a.namespace,
      tenant: a.tenant,
      provider: a.provider,
      action_type: a.action_type,
      payload: a.payload,
      metadata: a.metadata,
      id: a.id,
      ...(a.dedup_key !== undefined ? { dedup_key: a.dedup_key } : {}),
      ...(a.status !== undefined ? { status: a.status } : {}),
      ...(a.fingerprint !== undefined ? { fingerprint: a.fingerprint } : {}),
    },
    state: {},
    now,
  };
}

/**
 * Evaluates the rules (first match in priority order) and applies the matched rule's action. A
 * dry run records the verdict, matched rule and would-be provider, and writes nothing. A rule
 * whose condition errors is logged, counted and treated as not matching.
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
    async run(ctx: DispatchContext): Promise<DispatchOutcome | undefined> {
      const decision = deps.rules.current.evaluate(evalInputOf(ctx, deps.clock.now()), deps.rules.isEnabled, onError);
      if (!decision) return undefined;
      ctx.verdict = decision.action.type;
      ctx.matchedRule = decision.rule.name;
      if (ctx.dryRun) {
        if (decision.action.type === 'reroute') ctx.provider = decision.action.target_provider;
        return undefined;
      }
      return RULE_ACTION_HANDLERS[decision.action.type](ctx, decision, deps);
    },
  };
}
