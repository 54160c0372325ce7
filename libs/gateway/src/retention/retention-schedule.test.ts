import { BackgroundConfig } from '@sluice/config';
import { InProcessScheduler, type Job } from '@sluice/state';
import { afterEach, describe, expect, it } from 'vitest';
import { RETENTION_REAP_KIND, RETENTION_SCHEDULE_ID, scheduleRetentionReaper } from './retention-schedule.js';

describe('scheduleRetentionReaper', () => {
  const schedulers: InProcessScheduler[] = [];
  const open = async (runs: Job[]) => {
    const scheduler = new InProcessScheduler();
    scheduler.consume(RETENTION_REAP_KIND, async (job) => void runs.push(job));
    await scheduler.start();
    schedulers.push(scheduler);
    return scheduler;
  };
  afterEach(async () => {
    await Promise.all(schedulers.splice(0).map((s) => s.close()));
  });

  it('defaults to on, every hour', () => {
    expect(BackgroundConfig.parse({})).toMatchObject({ enable_retention_reaper: true, retention_check_interval_seconds: 3600 });
  });

  it('repeats one job id at the configured interval; re-declaring it (every worker boots) adds no run', async () => {
    const runs: Job[] = [];
    const scheduler = await open(runs);
    const background = BackgroundConfig.parse({ retention_check_interval_seconds: 3600 });
    for (let i = 0; i < 3; i++) await scheduleRetentionReaper(scheduler, background);
    await expect.poll(() => runs.length).toBe(1); // a fixed period fires once right away
    await new Promise((r) => setTimeout(r, 100));
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ id: RETENTION_SCHEDULE_ID, kind: RETENTION_REAP_KIND });
  });

  it('removes the schedule when the reaper is disabled', async () => {
    const runs: Job[] = [];
    const scheduler = await open(runs);
    await scheduleRetentionReaper(scheduler, BackgroundConfig.parse({ retention_check_interval_seconds: 1 }));
    await expect.poll(() => runs.length).toBe(1);
    await scheduleRetentionReaper(scheduler, BackgroundConfig.parse({ enable_retention_reaper: false }));
    expect(await scheduler.cancel(RETENTION_REAP_KIND, RETENTION_SCHEDULE_ID)).toBe(false); // already gone
    await new Promise((r) => setTimeout(r, 1200));
    expect(runs).toHaveLength(1);
  });
});
