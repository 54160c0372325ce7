import type { Clock, PlaygroundInput, PlaygroundResult } from '@sluice/core';
import { applyMergePatch, playgroundContext, type EvalInput } from '@sluice/rules';
import type { RuleRepository } from './rule-repository.js';

/**
 * The rule playground: the same compiled rules and evaluator as dispatch, with a full trace.
 * Read-only by construction: it never calls a rule-action handler, a provider or the state store.
 */
export function evaluatePlayground(rules: RuleRepository, body: PlaygroundInput, clock: Clock, env: NodeJS.ProcessEnv): PlaygroundResult {
  const now = body.evaluate_at ? Date.parse(body.evaluate_at) : clock.now();
  const input: EvalInput = {
    action: {
      namespace: body.namespace,
      tenant: body.tenant,
      provider: body.provider,
      action_type: body.action_type,
      payload: body.payload,
      metadata: body.metadata ?? {},
    },
    state: body.mock_state ?? {},
    now,
  };
  const started = process.hrtime.bigint();
  const outcome = rules.current.trace(input, {
    includeDisabled: body.include_disabled,
    evaluateAll: body.evaluate_all,
    isEnabled: rules.isEnabled,
  });
  const elapsedUs = Number((process.hrtime.bigint() - started) / 1000n);
  const decision = outcome.decision;
  const verdict = outcome.erroredBeforeMatch ? 'error' : (decision?.action.type ?? 'allow');
  const modified =
    !outcome.erroredBeforeMatch && decision?.action.type === 'modify'
      ? (applyMergePatch(body.payload, decision.action.changes) as Record<string, unknown>)
      : null;
  return {
    verdict,
    matched_rule: outcome.erroredBeforeMatch ? null : (decision?.rule.name ?? null),
    has_errors: outcome.hasErrors,
    total_rules_evaluated: outcome.evaluated,
    total_rules_skipped: outcome.skipped,
    evaluation_duration_us: elapsedUs,
    trace: outcome.trace,
    context: playgroundContext(now, env, 'UTC'),
    modified_payload: modified,
  };
}
