import type { Clock, DispatchOutcome } from '@sluice/core';
import type { Decision } from '@sluice/rules';
import type { StateStore } from '@sluice/state';
import type { DispatchContext } from '../pipeline/context.js';

interface RuleActionDeps {
  state: StateStore;
  clock: Clock;
}

/**
 * What a matched rule does to a live dispatch: return an outcome to stop the pipeline, or
 * nothing to let the action continue (possibly changed: rerouted, patched, annotated).
 * Dry runs never reach a handler: they only record the verdict.
 */
export type RuleActionHandler = (ctx: DispatchContext, decision: Decision, deps: RuleActionDeps) => Promise<DispatchOutcome | undefined>;
