import type { BackgroundConfig } from '@sluice/config';
import type { Scheduler } from '@sluice/state';

/** The job kind (a durable BullMQ queue name: never rename) and the one schedule id of the reaper. */
export const RETENTION_REAP_KIND = 'retention-reap';
export const RETENTION_SCHEDULE_ID = 'retention-reaper';

/**
 * Declares (or, when disabled, removes) the reaper's repeatable job. One schedule id for the
 * whole deployment: every worker re-declares it on boot, which changes nothing when the interval
 * is the same, and each occurrence is one job that exactly one worker takes. At a schedule
 * check (`onlyIfUnchanged`) a disabled one removes nothing: that is for its boot, not for every
 * check while workers that still have it enabled run (a rolling deploy).
 */
export async function scheduleRetentionReaper(scheduler: Scheduler, background: BackgroundConfig, onlyIfUnchanged = false): Promise<void> {
  if (!background.enable_retention_reaper) {
    if (!onlyIfUnchanged) await scheduler.cancel(RETENTION_REAP_KIND, RETENTION_SCHEDULE_ID);
    return;
  }
  await scheduler.repeat(RETENTION_REAP_KIND, { id: RETENTION_SCHEDULE_ID, everyMs: background.retention_check_interval_seconds * 1000, onlyIfUnchanged });
}
