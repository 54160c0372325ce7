import { ManualClock } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { InProcessScheduler } from '../src/memory/in-process-scheduler.js';
import { CONTRACT_BACKOFF_MS, schedulerContract } from './contract/scheduler.contract.js';

schedulerContract('memory', async () => {
  const clock = new ManualClock();
  const scheduler = new InProcessScheduler({ backoffBaseMs: CONTRACT_BACKOFF_MS, clock });
  return { scheduler, clock, cleanup: () => scheduler.close() };
});

describe('InProcessScheduler specifics', () => {
  it('forgets finished ids after retention, so the id can be enqueued again', async () => {
    const clock = new ManualClock();
    const s = new InProcessScheduler({ retentionMs: 100, clock });
    const runs: number[] = [];
    s.consume('k', async () => void runs.push(clock.now()));
    await s.start();
    try {
      const t0 = clock.now();
      await s.enqueue('k', { id: 'once' });
      await clock.advanceAsync(0);
      expect(runs).toEqual([t0]);
      await clock.advanceAsync(99);
      expect(await s.enqueue('k', { id: 'once' })).toEqual({ enqueued: false });
      await clock.advanceAsync(1);
      expect(await s.enqueue('k', { id: 'once' })).toEqual({ enqueued: true });
      await clock.advanceAsync(0);
      expect(runs).toEqual([t0, t0 + 100]);
    } finally {
      await s.close();
    }
  });

  it('runs a cron schedule at each slot in its time zone, by the clock', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 7, 59, 30));
    const s = new InProcessScheduler({ clock });
    const runs: string[] = [];
    s.consume('nine', async () => void runs.push(new Date(clock.now()).toISOString()));
    await s.start();
    try {
      await s.repeat('nine', { id: 'daily', cron: '0 9 * * *', timezone: 'Europe/Berlin' });
      await clock.advanceAsync(29_999);
      expect(runs).toEqual([]);
      await clock.advanceAsync(1);
      expect(runs).toEqual(['2026-01-01T08:00:00.000Z']);
      await clock.advanceAsync(3 * 86_400_000 - 1);
      expect(runs).toEqual(['2026-01-01T08:00:00.000Z', '2026-01-02T08:00:00.000Z', '2026-01-03T08:00:00.000Z']);
    } finally {
      await s.close();
    }
  });

  it('keeps a fixed period in phase after a timer fired late (a stalled event loop)', async () => {
    const clock = new ManualClock();
    let lagNext = 250;
    // The clock the scheduler sees: its next timer fires 250 ms late, the others on time.
    const lagging = {
      now: () => clock.now(),
      setTimer: (fn: () => void, delayMs: number) => {
        const lag = lagNext;
        lagNext = 0;
        return clock.setTimer(fn, delayMs + lag);
      },
      setRepeating: (fn: () => void, intervalMs: number) => clock.setRepeating(fn, intervalMs),
    };
    const s = new InProcessScheduler({ clock: lagging });
    const t0 = clock.now();
    const runs: number[] = [];
    s.consume('tick', async () => void runs.push(clock.now() - t0));
    await s.start();
    try {
      await s.repeat('tick', { id: 'every-100', everyMs: 100 });
      await clock.advanceAsync(450);
      // Late at 250, then back on the 100 ms grid: no run squeezed in at once, no shifted phase.
      expect(runs).toEqual([250, 300, 400]);
    } finally {
      await s.close();
    }
  });

  it('sets no timer of its own once closed', async () => {
    const clock = new ManualClock();
    const s = new InProcessScheduler({ clock });
    s.consume('k', async () => {});
    await s.enqueue('k', { id: 'later', delayMs: 60_000 });
    await s.repeat('k', { id: 'tick', everyMs: 1000 });
    expect(clock.pendingTimers).toBe(3); // the job, the schedule and the sweep
    await s.close();
    expect(clock.pendingTimers).toBe(0);
  });

  it('refuses consume() after start() and work after close()', async () => {
    const s = new InProcessScheduler();
    await s.start();
    expect(() => s.consume('k', async () => {})).toThrow(/before start/);
    await s.close();
    await expect(s.enqueue('k', { id: 'x' })).rejects.toThrow(/closed/);
  });
});
