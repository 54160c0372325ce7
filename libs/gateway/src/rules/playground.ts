import type { Clock, PlaygroundInput, PlaygroundResult } from '@sluice/core';
import { applyMergePatch, playgroundContext, type EvalInput, type TraceOutcome } from '@sluice/rules';
import type { MutedBy } from '../pipeline/context.js';
import type { SilenceIndex } from '../silences/silence-index.js';
import { intervalVerdict } from '../time-intervals/interval-gate.js';
import type { IntervalIndex } from '../time-intervals/interval-index.js';
import type { RuleRepository } from './rule-repository.js';

/** The snapshots the playground reads (never writes) to report what would mute the action after the rules. */
export interface PlaygroundMutes {
  silences: { readonly current: SilenceIndex };
  timeIntervals: { readonly current: IntervalIndex };
}

/** What the rules see of a playground request (also `sluice rules test`, offline). */
export function playgroundEvalInput(body: PlaygroundInput, now: number): EvalInput {
  return {
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
}

/** The verdict of a trace (`error` when a rule failed before any matched, `allow` when none matched) and the deciding rule. */
export function playgroundVerdict(outcome: TraceOutcome): { verdict: string; matched_rule: string | null } {
  if (outcome.erroredBeforeMatch) return { verdict: 'error', matched_rule: null };
  return { verdict: outcome.decision?.action.type ?? 'allow', matched_rule: outcome.decision?.rule.name ?? null };
}

/**
 * The rule playground: the same compiled rules and evaluator as dispatch, with a full trace.
 * Read-only by construction: it never calls a rule-action handler, a provider or the state store.
 * It also reports what would suppress the action after the rules (a silence, the matched rule's
 * time interval) and the interval names rules give that do not exist for the action's scope.
 */
export function evaluatePlayground(
  rules: RuleRepository,
  body: PlaygroundInput,
  clock: Clock,
  env: NodeJS.ProcessEnv,
  mutes: PlaygroundMutes,
): PlaygroundResult {
  const now = body.evaluate_at ? Date.parse(body.evaluate_at) : clock.now();
  const input = playgroundEvalInput(body, now);
  const started = process.hrtime.bigint();
  const outcome = rules.current.trace(input, {
    includeDisabled: body.include_disabled,
    evaluateAll: body.evaluate_all,
    isEnabled: rules.isEnabled,
  });
  const elapsedUs = Number((process.hrtime.bigint() - started) / 1000n);
  const decision = outcome.decision;
  const { verdict, matched_rule } = playgroundVerdict(outcome);
  const modified =
    !outcome.erroredBeforeMatch && decision?.action.type === 'modify'
      ? (applyMergePatch(body.payload, decision.action.changes) as Record<string, unknown>)
      : null;
  const { namespace, tenant } = body;
  const intervals = mutes.timeIntervals.current;
  const silence = mutes.silences.current.match(namespace, tenant, body.metadata?.labels, now);
  let mutedBy: MutedBy | null = silence ? { silence_id: silence.id } : null;
  if (!mutedBy && decision && !outcome.erroredBeforeMatch) mutedBy = intervalVerdict(intervals, decision.rule, namespace, tenant, now).mutedBy ?? null;
  const unknown_intervals = rules.current
    .list()
    .flatMap((rule) => intervalVerdict(intervals, rule, namespace, tenant, now).missing.map((m) => ({ rule: rule.name, field: m.field, interval: m.name })));
  return {
    verdict,
    matched_rule,
    has_errors: outcome.hasErrors,
    total_rules_evaluated: outcome.evaluated,
    total_rules_skipped: outcome.skipped,
    evaluation_duration_us: elapsedUs,
    trace: outcome.trace,
    context: playgroundContext(now, env, 'UTC'),
    modified_payload: modified,
    muted_by: mutedBy,
    unknown_intervals,
  };
}
