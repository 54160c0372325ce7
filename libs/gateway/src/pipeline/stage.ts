import type { DispatchOutcome } from '@sluice/core';
import type { DispatchContext } from './context.js';
import type { StageName } from './stage-order.js';

/**
 * One step of the dispatch pipeline. `run` returns an outcome to stop the pipeline there
 * (suppressed, throttled, executed...) or nothing to hand the action to the next stage.
 */
export interface Stage {
  readonly name: StageName;
  /** Whether the stage also runs for dry runs (it must then write no state). */
  readonly inDryRun: boolean;
  /** May answer synchronously when it has nothing to wait for (no quota policy, no rules), saving a promise. */
  run(ctx: DispatchContext): Promise<DispatchOutcome | undefined> | DispatchOutcome | undefined;
  /**
   * True when the stage has nothing to do for this action: `run` would answer undefined at once,
   * with no I/O (no quota policy applies, no rules are loaded, no rule matched). Tracing starts
   * no span for it: an empty span tells nothing its absence does not.
   */
  idle?(ctx: DispatchContext): boolean;
}
