import type { Action } from '@sluice/core';

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
  /** W3C trace context from the request, carried for logs and audit. */
  traceparent: string | undefined;
  /** Who dispatched it (for audit); absent for internal dispatches. */
  caller: DispatchCaller | undefined;
}

/** The identity parts audit keeps: never a credential. */
export interface DispatchCaller {
  id: string;
  method: string;
}
