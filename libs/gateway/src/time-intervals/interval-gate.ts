import type { CompiledRule } from '@sluice/rules';
import type { MutedBy } from '../pipeline/context.js';
import type { IntervalIndex } from './interval-index.js';

export interface IntervalVerdict {
  /** Set when the rule's intervals mute the action now. */
  mutedBy: MutedBy | undefined;
  /** Names the rule gives that no interval defines in the action's scope (mute: ignored; active: counted as outside). */
  missing: { name: string; field: 'mute_time_intervals' | 'active_time_intervals' }[];
}

const NONE: IntervalVerdict = Object.freeze({ mutedBy: undefined, missing: [] }) as IntervalVerdict;

/**
 * A matched rule's time intervals at `nowMs`: muted while any of its mute_time_intervals is
 * active, or while none of its active_time_intervals is (then the first name is reported).
 */
export function intervalVerdict(index: IntervalIndex, rule: CompiledRule, namespace: string, tenant: string, nowMs: number): IntervalVerdict {
  const mute = rule.muteTimeIntervals;
  const active = rule.activeTimeIntervals;
  if (mute.length === 0 && active.length === 0) return NONE;
  const missing: IntervalVerdict['missing'] = [];
  let mutedBy: MutedBy | undefined;
  for (const name of mute) {
    const found = index.resolve(namespace, tenant, name);
    if (!found) missing.push({ name, field: 'mute_time_intervals' });
    else if (!mutedBy && found.schedule.isActive(nowMs)) mutedBy = { interval: name, reason: 'mute_time_interval' };
  }
  if (active.length > 0) {
    let inside = false;
    for (const name of active) {
      const found = index.resolve(namespace, tenant, name);
      if (!found) missing.push({ name, field: 'active_time_intervals' });
      else if (found.schedule.isActive(nowMs)) inside = true;
    }
    if (!inside && !mutedBy) mutedBy = { interval: active[0] as string, reason: 'active_time_interval' };
  }
  return { mutedBy, missing };
}
