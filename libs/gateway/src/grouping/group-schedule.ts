import type { Scheduler } from '@sluice/state';
import { GROUP_SWEEP_KIND, GROUP_SWEEP_SCHEDULE_ID } from './group-keys.js';

/** How often the overdue-flush sweep runs, and how late a flush must be before it is re-enqueued. */
const GROUP_SWEEP_INTERVAL_MS = 60_000;
export const GROUP_SWEEP_GRACE_MS = 30_000;

/** One schedule id for the deployment: every worker declares it on boot, one worker runs each sweep. */
export async function scheduleGroupSweep(scheduler: Scheduler, onlyIfUnchanged = false): Promise<void> {
  await scheduler.repeat(GROUP_SWEEP_KIND, { id: GROUP_SWEEP_SCHEDULE_ID, everyMs: GROUP_SWEEP_INTERVAL_MS, onlyIfUnchanged });
}
