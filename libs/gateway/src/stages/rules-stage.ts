import type { Clock, DispatchOutcome } from '@sluice/core';
import { EvaluationLimitExceeded, PluginCallNeeded, SimilarityNeeded, type CompiledRule, type EvalInput, type RuleActionType } from '@sluice/rules';
import type { StateStore } from '@sluice/state';
import { type Logger, logThrottle } from '@sluice/telemetry';
import type { DispatchContext } from '../pipeline/context.js';
import type { Stage } from '../pipeline/stage.js';
import type { RuleActionHandler } from '../rule-actions/rule-action-handler.js';
import { RULE_ACTION_HANDLERS } from '../rule-actions/handlers.js';
import type { RuleRepository } from '../rules/rule-repository.js';

/** A failing rule is logged at most once per this long (its failures are all counted in sluice_rule_errors_total). */
const RULE_ERROR_LOG_WINDOW_MS = 30_000;

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
  /**
   * Similarity of a text to a topic (`semantic_match` conditions), from the embedding service;
   * rejects with a FailureInfo-carrying error when the dispatch must fail (fail_open off).
   */
  similarity?: (topic: string, text: string) => Promise<number>;
  /** A WASM plugin function's verdict on the dispatch (`wasm_plugin` conditions); the safe default (false) when it fails. */
  plugin?: (plugin: string, fn: string, ctx: DispatchContext) => Promise<boolean>;
  /** Wall time the rules of one request may take, a batch's items together (rules.request_max_evaluation_ms); unbounded without it. */
  requestMaxEvaluationMs?: number;
}

/** A rule stopped at an evaluation limit (its message names both): the dispatch fails instead of going on as if it had not matched. */
class RuleLimitStop extends Error {}

function limitFailure(ctx: DispatchContext, message: string): DispatchOutcome {
  return { outcome: 'failed', action_id: ctx.action.id, error: { code: 'RULE_LIMIT_EXCEEDED', message, retryable: false, attempts: 0 } };
}

/** An embedding the dispatch cannot do without (embedding.fail_open is false). */
export class SimilarityUnavailable extends Error {}

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
 * not matching, unless it stopped at an evaluation limit: the dispatch then fails
 * (RULE_LIMIT_EXCEEDED), as it does once the request's rules have taken their time budget.
 */
export function rulesStage(deps: RulesStageDeps): Stage {
  const log = deps.logger.child({ component: 'rules' });
  // A broken rule fails on every dispatch it sees: one line per rule per window, with how many were held back.
  const throttle = logThrottle(RULE_ERROR_LOG_WINDOW_MS, () => deps.clock.now());
  const onError = (rule: CompiledRule, err: unknown) => {
    // Not errors: the evaluation stops, what it needs is computed, and it runs again (decideAsync).
    if (err instanceof SimilarityNeeded && deps.similarity) throw err;
    if (err instanceof PluginCallNeeded && deps.plugin) throw err;
    deps.onRuleError?.(rule);
    const limited = err instanceof EvaluationLimitExceeded;
    const suppressed = throttle(rule.name);
    if (suppressed !== null) {
      const msg = limited ? 'rule evaluation stopped at a limit; the dispatch fails' : 'rule evaluation failed; treated as not matching';
      log.warn({ rule: rule.name, err: err instanceof Error ? err.message : String(err), suppressed }, msg);
    }
    // The input decides whether a limit is hit: skipping the rule would let a padded payload past it.
    if (limited) throw new RuleLimitStop(`rule ${rule.name}: ${err.message}`);
  };
  const budgetMs = deps.requestMaxEvaluationMs ?? Number.POSITIVE_INFINITY;
  // No rules: nothing can match, so neither state.current nor the evaluation input is needed.
  const noRules = (): boolean => deps.rules.current.size === 0;
  return {
    name: 'rules',
    inDryRun: true,
    run(ctx: DispatchContext): Promise<DispatchOutcome | undefined> | undefined {
      if (noRules()) return undefined;
      const current = deps.currentState?.(ctx);
      return current instanceof Promise ? current.then((state) => decide(ctx, state)) : decide(ctx, current);
    },
    idle: noRules,
  };

  function decide(ctx: DispatchContext, current: string | undefined): Promise<DispatchOutcome | undefined> | undefined {
    if (ctx.ruleTime.spentMs >= budgetMs) {
      return Promise.resolve(limitFailure(ctx, `the request's rules took more than ${budgetMs} ms (rules.request_max_evaluation_ms); nothing was executed`));
    }
    const input = evalInputOf(ctx, deps.clock.now(), current);
    const started = performance.now();
    try {
      return apply(ctx, deps.rules.current.evaluate(input, deps.rules.isEnabled, onError));
    } catch (err) {
      if (err instanceof RuleLimitStop) return Promise.resolve(limitFailure(ctx, err.message));
      if (err instanceof SimilarityNeeded || err instanceof PluginCallNeeded) return decideAsync(ctx, input, err);
      throw err;
    } finally {
      ctx.ruleTime.spentMs += performance.now() - started;
    }
  }

  /**
   * A semantic_match or wasm_plugin condition was reached: get what it needs (a similarity from the
   * embedding service, a verdict from the plugin pool), then evaluate again, until none is missing.
   */
  async function decideAsync(ctx: DispatchContext, input: EvalInput, first: SimilarityNeeded | PluginCallNeeded): Promise<DispatchOutcome | undefined> {
    const similarities = new Map<string, number>();
    const verdicts = new Map<string, boolean>();
    const keyOf = (a: string, b: string) => `${a}\u0000${b}`;
    input.similarity = (topic, text) => similarities.get(keyOf(topic, text));
    input.plugin = (plugin, fn) => verdicts.get(keyOf(plugin, fn));
    for (let needed: SimilarityNeeded | PluginCallNeeded | null = first; needed !== null; ) {
      if (needed instanceof PluginCallNeeded) {
        verdicts.set(keyOf(needed.plugin, needed.fn), await (deps.plugin as NonNullable<RulesStageDeps['plugin']>)(needed.plugin, needed.fn, ctx));
      } else {
        try {
          similarities.set(keyOf(needed.topic, needed.text), await (deps.similarity as NonNullable<RulesStageDeps['similarity']>)(needed.topic, needed.text));
        } catch (err) {
          if (!(err instanceof SimilarityUnavailable)) throw err;
          const error = { code: 'EMBEDDING_FAILED' as const, message: `semantic_match: ${err.message}`, retryable: true, attempts: 0 };
          return { outcome: 'failed', action_id: ctx.action.id, error };
        }
      }
      try {
        apply(ctx, deps.rules.current.evaluate(input, deps.rules.isEnabled, onError));
        needed = null;
      } catch (err) {
        if (err instanceof RuleLimitStop) return limitFailure(ctx, err.message);
        if (!(err instanceof SimilarityNeeded || err instanceof PluginCallNeeded)) throw err;
        needed = err;
      }
    }
    return undefined;
  }

  function apply(ctx: DispatchContext, decision: ReturnType<RuleRepository['current']['evaluate']>): undefined {
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
    idle: (ctx) => ctx.decision === null,
  };
}
