import { afterEach, describe, expect, it } from 'vitest';
import type { Job, Scheduler } from '../../src/scheduler.js';

export interface SchedulerFixture {
  scheduler: Scheduler;
  cleanup(): Promise<void>;
}

/** Polls until `cond` holds; fails with `what` after `timeoutMs`. */
export async function waitFor(what: string, cond: () => boolean, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * One suite, both backends. `make` must return a scheduler with a fast retry backoff (≤ 100 ms).
 * Each test builds its own scheduler so no state leaks between them.
 */
export function schedulerContract(name: string, make: () => Promise<SchedulerFixture>): void {
  describe(`Scheduler contract: ${name}`, () => {
    const fixtures: SchedulerFixture[] = [];
    const open = async (): Promise<Scheduler> => {
      const f = await make();
      fixtures.push(f);
      return f.scheduler;
    };
    afterEach(async () => {
      await Promise.all(fixtures.splice(0).map((f) => f.cleanup()));
    });

    const recorder = (s: Scheduler, kind: string, opts: { concurrency?: number } = {}): Job[] => {
      const runs: Job[] = [];
      s.consume(kind, async (job) => void runs.push(job), opts);
      return runs;
    };

    it('runs an immediate job once with its data', async () => {
      const s = await open();
      const runs = recorder(s, 'immediate');
      await s.start();
      expect(await s.enqueue('immediate', { id: 'a', data: { n: 1, tags: ['x'] } })).toEqual({ enqueued: true });
      await waitFor('the job', () => runs.length === 1);
      await sleep(150);
      expect(runs).toEqual([{ id: 'a', kind: 'immediate', data: { n: 1, tags: ['x'] }, attempt: 1 }]);
    });

    it('keeps ids with ":" and integer-like ids intact', async () => {
      const s = await open();
      const runs = recorder(s, 'ids');
      await s.start();
      for (const id of ['group-flush:t1:g:7', '42', '%3A', '#1']) await s.enqueue('ids', { id });
      await waitFor('four jobs', () => runs.length === 4);
      expect(runs.map((j) => j.id).sort()).toEqual(['#1', '%3A', '42', 'group-flush:t1:g:7']);
    });

    it('holds jobs until a consumer starts', async () => {
      const s = await open();
      await s.enqueue('late', { id: 'early-bird', data: 'x' });
      await sleep(100);
      const runs = recorder(s, 'late');
      await s.start();
      await waitFor('the held job', () => runs.length === 1);
      expect(runs[0]?.data).toBe('x');
    });

    it('does not run a delayed job early, and runs it once', async () => {
      const s = await open();
      const ranAt: number[] = [];
      s.consume('delayed', async () => void ranAt.push(Date.now()));
      await s.start();
      const t0 = Date.now();
      await s.enqueue('delayed', { id: 'd', delayMs: 300 });
      await waitFor('the delayed job', () => ranAt.length === 1);
      expect((ranAt[0] ?? 0) - t0).toBeGreaterThanOrEqual(290); // a few ms of timer slack
      await sleep(150);
      expect(ranAt).toHaveLength(1);
    });

    it('dedupes an id that is pending, running or recently done', async () => {
      const s = await open();
      const runs = recorder(s, 'dedupe');
      await s.start();
      expect(await s.enqueue('dedupe', { id: 'x', delayMs: 200 })).toEqual({ enqueued: true });
      expect(await s.enqueue('dedupe', { id: 'x' })).toEqual({ enqueued: false });
      const burst = await Promise.all(Array.from({ length: 10 }, () => s.enqueue('dedupe', { id: 'y' })));
      expect(burst.filter((r) => r.enqueued)).toHaveLength(1);
      await waitFor('both jobs', () => runs.length === 2);
      expect(await s.enqueue('dedupe', { id: 'y' })).toEqual({ enqueued: false }); // finished, within retention
      await sleep(200);
      expect(runs.map((j) => j.id).sort()).toEqual(['x', 'y']);
    });

    it('dedupes per kind, not across kinds', async () => {
      const s = await open();
      expect(await s.enqueue('kind-a', { id: 'same', delayMs: 10_000 })).toEqual({ enqueued: true });
      expect(await s.enqueue('kind-b', { id: 'same', delayMs: 10_000 })).toEqual({ enqueued: true });
    });

    it('retries a failing handler with visible attempt numbers', async () => {
      const s = await open();
      const attempts: number[] = [];
      let succeeded = false;
      s.consume('flaky', async (job) => {
        attempts.push(job.attempt);
        if (job.attempt < 2) throw new Error('transient');
        succeeded = true;
      });
      await s.start();
      await s.enqueue('flaky', { id: 'f', attempts: 3 });
      await waitFor('the retry', () => succeeded);
      await sleep(200);
      expect(attempts).toEqual([1, 2]);
    });

    it('stops after the configured number of attempts', async () => {
      const s = await open();
      const attempts: number[] = [];
      s.consume('doomed', async (job) => {
        attempts.push(job.attempt);
        throw new Error('permanent');
      });
      await s.start();
      await s.enqueue('doomed', { id: 'z', attempts: 2 });
      await waitFor('two attempts', () => attempts.length === 2);
      await sleep(400); // a third attempt would come after 4x the base backoff
      expect(attempts).toEqual([1, 2]);
    });

    it('cancels a delayed job before it runs', async () => {
      const s = await open();
      const runs = recorder(s, 'cancel');
      await s.start();
      await s.enqueue('cancel', { id: 'c', delayMs: 300 });
      expect(await s.cancel('cancel', 'c')).toBe(true);
      expect(await s.cancel('cancel', 'c')).toBe(false);
      expect(await s.cancel('cancel', 'never-existed')).toBe(false);
      await sleep(500);
      expect(runs).toHaveLength(0);
      expect(await s.enqueue('cancel', { id: 'c' })).toEqual({ enqueued: true }); // the id is free again
      await waitFor('the re-enqueued job', () => runs.length === 1);
    });

    it('repeats every N ms, replaces a schedule by id, and stops on cancel', async () => {
      const s = await open();
      const runs = recorder(s, 'tick');
      await s.start();
      await s.repeat('tick', { id: 'heartbeat', everyMs: 100, data: 'v1' });
      await waitFor('three ticks', () => runs.length >= 3);
      expect(runs.every((j) => j.id === 'heartbeat' && j.kind === 'tick')).toBe(true);
      await s.repeat('tick', { id: 'heartbeat', everyMs: 100, data: 'v2' });
      await waitFor('a tick with the new data', () => runs.some((j) => j.data === 'v2'));
      expect(await s.cancel('tick', 'heartbeat')).toBe(true);
      const seen = runs.length;
      await sleep(400);
      expect(runs.length).toBeLessThanOrEqual(seen + 1); // at most one already in flight
    });

    it('re-declaring an unchanged schedule adds no runs', async () => {
      const s = await open();
      const runs = recorder(s, 'boot');
      await s.start();
      for (let i = 0; i < 5; i++) await s.repeat('boot', { id: 'nightly-ish', everyMs: 1000, data: { v: 1 } });
      await sleep(700);
      expect(runs.length).toBeGreaterThanOrEqual(1);
      expect(runs.length).toBeLessThanOrEqual(2); // the immediate run, maybe one slot boundary
    });

    it('rejects malformed repeat and enqueue options', async () => {
      const s = await open();
      await expect(s.repeat('r', { id: 'both', everyMs: 10, cron: '* * * * *' })).rejects.toThrow();
      await expect(s.repeat('r', { id: 'neither' })).rejects.toThrow();
      await expect(s.repeat('r', { id: 'secs', cron: '*/5 * * * * *' })).rejects.toThrow(/5 fields/);
      await expect(s.repeat('r', { id: 'tz', cron: '0 9 * * *', timezone: 'Mars/Olympus' })).rejects.toThrow();
      await expect(s.enqueue('bad:kind', { id: 'k' })).rejects.toThrow();
      await expect(s.enqueue('r', { id: 'a', attempts: 0 })).rejects.toThrow();
      await s.repeat('r', { id: 'nine-berlin', cron: '0 9 * * *', timezone: 'Europe/Berlin' });
      expect(await s.cancel('r', 'nine-berlin')).toBe(true);
    });

    it('close waits for a running handler', async () => {
      const s = await open();
      let started = false;
      let finished = false;
      s.consume('slow', async () => {
        started = true;
        await sleep(300);
        finished = true;
      });
      await s.start();
      await s.enqueue('slow', { id: 's' });
      await waitFor('the handler to start', () => started);
      await s.close();
      expect(finished).toBe(true);
      await s.close(); // idempotent
    });
  });
}
