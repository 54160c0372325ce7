import type { Clock, DispatchOutcome } from '@sluice/core';
import type { DispatchContext } from '../pipeline/context.js';
import type { Stage } from '../pipeline/stage.js';
import type { SilenceService } from './silence-service.js';

/**
 * After the rules: an action an active silence covers (its namespace, its tenant or a parent, all
 * matchers holding on its labels) is suppressed, before the matched rule's action takes anything
 * (a dedup key, a throttle slot). Its comment goes to the audit record only. A dry run reports
 * the silence and goes on. Synchronous: it reads the replica's snapshot.
 */
export function silencesStage(silences: Pick<SilenceService, 'current'>, clock: Clock): Stage {
  return {
    name: 'silences',
    inDryRun: true,
    run(ctx: DispatchContext): DispatchOutcome | undefined {
      const { namespace, tenant, id, metadata } = ctx.action;
      const silence = silences.current.match(namespace, tenant, metadata.labels, clock.now());
      if (!silence) return undefined;
      if (ctx.dryRun) {
        ctx.mutedBy = { silence_id: silence.id };
        return undefined;
      }
      // A parent tenant's silence mutes its children, whose keys cannot read it: its comment stays out of their records.
      if (silence.tenant === tenant) ctx.auditDetails = { ...ctx.auditDetails, silence_comment: silence.comment };
      return { outcome: 'suppressed', action_id: id, rule: null, silence_id: silence.id };
    },
  };
}
