import type { RecurringAction } from '@sluice/core';
import type { Scheduler } from '@sluice/state';
import type { RecurringScope } from './recurring-input.js';
import { RECURRING_FIRE_KIND, scheduleId, type FireJobData } from './recurring-keys.js';
import { storedSchedule } from './cron-schedule.js';

/** How often a test-mode (seconds) schedule is polled; the handler decides which occurrence is due. */
const TICK_MS = 1000;
const MAX_ROUNDS = 5;

/** What the Scheduler should hold for a record: nothing, its cron, or (test mode) a 1 s tick. */
type Desired = { kind: 'off' } | { kind: 'cron'; cron: string; timezone: string } | { kind: 'tick' };

function desired(record: RecurringAction | null): Desired {
  if (!record?.enabled || record.next_execution === null) return { kind: 'off' };
  if (storedSchedule(record.cron_expr, record.timezone).seconds) return { kind: 'tick' };
  return { kind: 'cron', cron: record.cron_expr, timezone: record.timezone };
}

/**
 * Keeps the Scheduler's schedule of one recurring action in line with its record. Every change
 * (create, update, pause, resume, delete, an occurrence that finishes it) calls `reconcile`,
 * from whichever process made it. Two reconciles racing could leave the older decision last; so
 * each one re-reads after acting and acts again when the record's desired schedule changed
 * meanwhile: the last change's reconcile acts last, and acting is idempotent.
 */
export class RecurringScheduling {
  constructor(
    private readonly scheduler: Scheduler,
    private readonly read: (scope: RecurringScope, id: string) => Promise<RecurringAction | null>,
  ) {}

  async reconcile(scope: RecurringScope, id: string): Promise<void> {
    let want = desired(await this.read(scope, id));
    for (let round = 0; round < MAX_ROUNDS; round++) {
      await this.apply(scope, id, want);
      const now = desired(await this.read(scope, id));
      if (JSON.stringify(now) === JSON.stringify(want)) return;
      want = now;
    }
  }

  /** Removes the schedule of a record that no longer exists. */
  cancel(id: string): Promise<boolean> {
    return this.scheduler.cancel(RECURRING_FIRE_KIND, scheduleId(id));
  }

  private async apply(scope: RecurringScope, id: string, want: Desired): Promise<void> {
    if (want.kind === 'off') {
      await this.cancel(id);
      return;
    }
    const data: FireJobData = { namespace: scope.namespace, tenant: scope.tenant, id };
    // Upserting an unchanged schedule keeps its timing (both backends), so repeating this is harmless.
    await this.scheduler.repeat(
      RECURRING_FIRE_KIND,
      want.kind === 'tick' ? { id: scheduleId(id), everyMs: TICK_MS, data } : { id: scheduleId(id), cron: want.cron, timezone: want.timezone, data },
    );
  }
}
