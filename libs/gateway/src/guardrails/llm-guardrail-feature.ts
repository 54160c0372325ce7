import type { DispatchOutcome, FailureInfo } from '@sluice/core';
import type { RuleAction } from '@sluice/rules';
import type { Feature, FeatureContext } from '../feature.js';
import type { RuleActionHandler } from '../rule-actions/rule-action-handler.js';
import { LlmGuardrail, UnknownEvaluator, type Evaluator } from './llm-guardrail.js';
import { outboundKey } from './outbound-key.js';

type GuardrailAction = Extract<RuleAction, { type: 'llm_guardrail' }>;

/**
 * The `llm_guardrail` rule action. Not flagged: the action goes on. Flagged: with `block_on_flag`
 * it is suppressed with the evaluator's reason; with `send_to` it goes to that provider instead
 * (outcome `rerouted`); with neither it goes on, the verdict kept in its audit record. An
 * evaluation that fails follows `llm_guardrail.fail_open`.
 */
export function llmGuardrailFeature(ctx: FeatureContext): Feature {
  const cfg = ctx.config.llm_guardrail;
  if (!cfg.enabled) {
    const off: RuleActionHandler = async (dispatch) =>
      failed(dispatch, {
        code: 'GUARDRAIL_EVALUATOR_NOT_FOUND',
        message: 'the LLM guardrail is not enabled (llm_guardrail.enabled)',
        retryable: false,
        attempts: 0,
      });
    return { name: 'llm-guardrail', ruleActions: { llm_guardrail: off } };
  }
  const evaluators = new Map<string, Evaluator>([
    ['default', { policy: cfg.policy, model: cfg.model, temperature: cfg.temperature, maxTokens: cfg.max_tokens }],
  ]);
  for (const [name, e] of Object.entries(cfg.evaluators)) {
    evaluators.set(name, {
      policy: e.policy,
      model: e.model ?? cfg.model,
      temperature: e.temperature ?? cfg.temperature,
      maxTokens: e.max_tokens ?? cfg.max_tokens,
    });
  }
  const guardrail = new LlmGuardrail({ endpoint: cfg.endpoint, apiKey: outboundKey(cfg), timeoutMs: cfg.timeout_seconds * 1000, evaluators });
  const log = ctx.logger.child({ component: 'llm-guardrail' });

  const handler: RuleActionHandler = async (dispatch, { rule, action }) => {
    const a = action as GuardrailAction;
    let verdict: Awaited<ReturnType<LlmGuardrail['evaluate']>>;
    try {
      verdict = await guardrail.evaluate(a.evaluator_name, dispatch.action);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      // Every guarded dispatch's audit record says what the guardrail did: here, that it could not decide.
      const fail_open = cfg.fail_open && !(err instanceof UnknownEvaluator);
      dispatch.auditDetails = { ...dispatch.auditDetails, guardrail: { evaluator: a.evaluator_name, error: message, fail_open } };
      if (err instanceof UnknownEvaluator) return failed(dispatch, { code: 'GUARDRAIL_EVALUATOR_NOT_FOUND', message, retryable: false, attempts: 0 });
      log.warn({ rule: rule.name, evaluator: a.evaluator_name, err: message, fail_open: cfg.fail_open }, 'llm guardrail evaluation failed');
      if (!cfg.fail_open)
        return failed(dispatch, { code: 'GUARDRAIL_FAILED', message: `llm_guardrail ${a.evaluator_name}: ${message}`, retryable: true, attempts: 0 });
      return undefined;
    }
    dispatch.auditDetails = { ...dispatch.auditDetails, guardrail: { evaluator: a.evaluator_name, flagged: verdict.flagged, reason: verdict.reason } };
    if (!verdict.flagged) return undefined;
    if (a.block_on_flag) return { outcome: 'suppressed', action_id: dispatch.action.id, rule: rule.name, reason: `LLM guardrail: ${verdict.reason}` };
    if (a.send_to !== undefined) dispatch.provider = a.send_to;
    return undefined;
  };
  return { name: 'llm-guardrail', ruleActions: { llm_guardrail: handler } };
}

function failed(dispatch: { action: { id: string } }, error: FailureInfo): DispatchOutcome {
  return { outcome: 'failed', action_id: dispatch.action.id, error };
}
