import type { Clock, DispatchOutcome } from '@sluice/core';
import type { DispatchContext } from '../pipeline/context.js';
import type { Stage } from '../pipeline/stage.js';
import { intervalVerdict } from './interval-gate.js';
import type { IntervalIndex } from './interval-index.js';

/**
 * After silences: the matched rule's mute_time_intervals and active_time_intervals. A muted
 * action is suppressed naming the interval and why, before the rule's action takes anything. A
 * dry run reports it and goes on. Synchronous: it reads the replica's snapshot.
 */
export function timeIntervalsStage(intervals: { readonly current: IntervalIndex }, clock: Clock): Stage {
  return {
    name: 'time_intervals',
    inDryRun: true,
    run(ctx: DispatchContext): DispatchOutcome | undefined {
      const rule = ctx.decision?.rule;
      if (!rule || (rule.muteTimeIntervals.length === 0 && rule.activeTimeIntervals.length === 0)) return undefined;
      const { mutedBy } = intervalVerdict(intervals.current, rule, ctx.action.namespace, ctx.action.tenant, clock.now());
      if (!mutedBy) return undefined;
      if (ctx.dryRun) {
        ctx.mutedBy ??= mutedBy;
        return undefined;
      }
      return { outcome: 'suppressed', action_id: ctx.action.id, rule: rule.name, ...mutedBy };
    },
  };
}
