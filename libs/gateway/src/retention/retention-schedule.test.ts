import { BackgroundConfig } from '@sluice/config';
import { ManualClock } from '@sluice/core';
import { InProcessScheduler, type Job } from '@sluice/state';
import { afterEach, describe, expect, it } from 'vitest';
import { RETENTION_REAP_KIND, RETENTION_SCHEDULE_ID, scheduleRetentionReaper } from './retention-schedule.js';

const HOUR = 3_600_000;

describe('scheduleRetentionReaper', () => {
  const schedulers: InProcessScheduler[] = [];
  /** A scheduler on a manual clock: the cycles are counted by moving time, not by waiting for it. */
  const open = async (runs: number[]) => {
    const clock = new ManualClock();
    const scheduler = new InProcessScheduler({ clock });
    scheduler.consume(RETENTION_REAP_KIND, async (job: Job) => {
      // A run of another id or kind would show as a time of -1.
      runs.push(job.id === RETENTION_SCHEDULE_ID && job.kind === RETENTION_REAP_KIND ? clock.now() : -1);
    });
    await scheduler.start();
    schedulers.push(scheduler);
    return { scheduler, clock };
  };
  afterEach(async () => {
    await Promise.all(schedulers.splice(0).map((s) => s.close()));
  });

  it('defaults to on, every hour', () => {
    expect(BackgroundConfig.parse({})).toMatchObject({ enable_retention_reaper: true, retention_check_interval_seconds: 3600 });
  });

  it('repeats one job id at the configured interval; re-declaring it (every worker boots) adds no run', async () => {
    const runs: number[] = [];
    const { scheduler, clock } = await open(runs);
    const t0 = clock.now();
    const background = BackgroundConfig.parse({ retention_check_interval_seconds: 3600 });
    for (let i = 0; i < 3; i++) await scheduleRetentionReaper(scheduler, background);
    await clock.advanceAsync(0);
    expect(runs).toEqual([t0]); // a fixed period fires once right away
    await clock.advanceAsync(HOUR / 2);
    await scheduleRetentionReaper(scheduler, background); // a worker booting later
    await clock.advanceAsync(HOUR / 2 - 1);
    expect(runs).toEqual([t0]);
    await clock.advanceAsync(1);
    expect(runs).toEqual([t0, t0 + HOUR]);
    await clock.advanceAsync(2 * HOUR);
    expect(runs).toEqual([t0, t0 + HOUR, t0 + 2 * HOUR, t0 + 3 * HOUR]);
  });

  it('removes the schedule when the reaper is disabled', async () => {
    const runs: number[] = [];
    const { scheduler, clock } = await open(runs);
    await scheduleRetentionReaper(scheduler, BackgroundConfig.parse({ retention_check_interval_seconds: 1 }));
    await clock.advanceAsync(1000);
    expect(runs).toHaveLength(2);
    await scheduleRetentionReaper(scheduler, BackgroundConfig.parse({ enable_retention_reaper: false }));
    expect(await scheduler.cancel(RETENTION_REAP_KIND, RETENTION_SCHEDULE_ID)).toBe(false); // already gone
    await clock.advanceAsync(10_000);
    expect(runs).toHaveLength(2);
  });
});
