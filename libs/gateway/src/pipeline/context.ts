import type { Action } from '@sluice/core';
import type { Decision } from '@sluice/rules';

/** What the stages of one dispatch share. Stages may narrow it (reroute, modify) as later features land. */
export interface DispatchContext {
  action: Action;
  /** Evaluate only: no provider call, no state writes. */
  dryRun: boolean;
  /** Provider the execute stage will use; starts as action.provider. */
  provider: string;
  /** Verdict tag so far (allow until a rule decides otherwise). */
  verdict: string;
  matchedRule: string | null;
  /** The matched rule and the action it decided, once the rules stage ran; null when none matched. */
  decision: Decision | null;
  /** Dry runs: what would have muted the action after the rules (a silence, or the matched rule's time interval). */
  mutedBy: MutedBy | undefined;
  /** Whether a retryable failure that outlives its retries goes to the dead-letter queue (not for a retry from it). */
  deadLetter: boolean;
  /** Outcome details only the audit record keeps (a silence's comment), never the response. */
  auditDetails: Record<string, unknown> | undefined;
  /** Gives back what the dispatch took and a failure must not keep (its dedup key), once it ends `failed`. */
  onFailed: (() => Promise<void>) | undefined;
  /** The chain run this dispatch started (a `chain` rule) or is a step of; audit records carry it. */
  chainId: string | undefined;
  /** W3C trace context from the request, carried for logs and audit. */
  traceparent: string | undefined;
  /** Who dispatched it (for audit); absent for internal dispatches. */
  caller: DispatchCaller | undefined;
  /** The intent written before the provider call (audit/action-intents.ts), settled by the audit record. */
  intent: string | undefined;
  /** Set as the provider call starts: from then on a failure must not say "nothing ran, retry". */
  providerCalled: boolean;
  /** Provider attempts the execute stage made (for its span). */
  attempts: number | undefined;
  /** Rule evaluation time of the request so far, shared by a batch's items (rules.request_max_evaluation_ms). */
  ruleTime: RuleTime;
}

/** Milliseconds a request has spent evaluating rules. */
export interface RuleTime {
  spentMs: number;
}

/** The identity parts audit keeps: never a credential. */
export interface DispatchCaller {
  id: string;
  method: string;
}

/** The fields a silence or time interval adds to a suppressed (or dry-run) outcome. */
export type MutedBy = { silence_id: string } | { interval: string; reason: 'mute_time_interval' | 'active_time_interval' };

/** A dispatch as it enters the pipeline: nothing decided yet, bound for the provider it names. */
export function dispatchContext(
  action: Action,
  opts: {
    dryRun?: boolean;
    deadLetter?: boolean;
    chainId?: string | undefined;
    traceparent?: string | undefined;
    caller?: DispatchCaller | undefined;
    ruleTime?: RuleTime | undefined;
  } = {},
): DispatchContext {
  return {
    action,
    dryRun: opts.dryRun === true,
    provider: action.provider,
    verdict: 'allow',
    matchedRule: null,
    decision: null,
    mutedBy: undefined,
    deadLetter: opts.deadLetter !== false,
    auditDetails: undefined,
    onFailed: undefined,
    chainId: opts.chainId,
    traceparent: opts.traceparent,
    caller: opts.caller,
    intent: undefined,
    providerCalled: false,
    attempts: undefined,
    ruleTime: opts.ruleTime ?? { spentMs: 0 },
  };
}
