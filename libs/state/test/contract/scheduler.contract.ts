import type { ManualClock } from '@sluice/core';
import { afterEach, describe, expect, it } from 'vitest';
import { poll } from '../../../../test/support/poll.js';
import type { Job, Scheduler } from '../../src/scheduler.js';

/** The retry backoff base every fixture must configure, so the tests know when retries fall due. */
export const CONTRACT_BACKOFF_MS = 50;

export interface SchedulerFixture {
  scheduler: Scheduler;
  /** The clock the scheduler runs on, if it can run on ours (memory); BullMQ runs on real time. */
  clock?: ManualClock;
  cleanup(): Promise<void>;
}

/** One handler run, stamped with the scheduler's time when it started. */
interface Run {
  job: Job;
  at: number;
}

const SENTINEL = 'sentinel:';
let sentinels = 0;

/**
 * One suite, both backends. `make` must return a scheduler whose retry backoff base is
 * CONTRACT_BACKOFF_MS. Each test builds its own scheduler so no state leaks between them.
 *
 * No test sleeps. On a manual clock, timing is proven by moving the clock: 1 ms before a job is
 * due it has not run, at its due time it has. On real time (BullMQ, which cannot use our clock),
 * tests wait for what they expect by polling, and prove timing from the times runs recorded.
 */
export function schedulerContract(name: string, make: () => Promise<SchedulerFixture>): void {
  describe(`Scheduler contract: ${name}`, () => {
    const fixtures: SchedulerFixture[] = [];
    let current: SchedulerFixture | undefined;
    const open = async (): Promise<Scheduler> => {
      current = await make();
      fixtures.push(current);
      return current.scheduler;
    };
    afterEach(async () => {
      await Promise.all(fixtures.splice(0).map((f) => f.cleanup()));
      current = undefined;
    });
    const clock = (): ManualClock | undefined => current?.clock;
    const now = (): number => clock()?.now() ?? Date.now();
    /** Timer slack allowed when comparing recorded times: none on a manual clock. */
    const slack = (): number => (clock() ? 0 : 10);
    /** Lets `ms` of scheduler time pass: moves the manual clock (running what falls due); real time needs no help. */
    const elapse = async (ms: number): Promise<void> => {
      await clock()?.advanceAsync(ms);
    };

    /** Records every run of `kind`, then does what `behave` does (throw to fail the attempt). */
    const recorder = (s: Scheduler, kind: string, behave?: (job: Job) => void): Run[] => {
      const runs: Run[] = [];
      s.consume(kind, async (job) => {
        runs.push({ job, at: now() });
        if (!job.id.startsWith(SENTINEL)) behave?.(job);
      });
      return runs;
    };
    const real = (runs: Run[]): Run[] => runs.filter((r) => !r.job.id.startsWith(SENTINEL));
    const ran = (runs: Run[], count: number): Promise<Run[]> =>
      poll(
        `${count} run(s)`,
        () => real(runs),
        (r) => r.length >= count,
      );

    /**
     * Bounds a "nothing more happens" assertion: anything enqueued so far with a delay (or
     * backoff) of at most `horizonMs` that wrongly still runs has run once this returns. A
     * sentinel job of the same kind due `horizonMs` from now is enqueued and awaited; both
     * backends start jobs in due order, and the manual clock is moved to the sentinel's time.
     */
    const quiet = async (s: Scheduler, kind: string, runs: Run[], horizonMs: number): Promise<void> => {
      const id = `${SENTINEL}${++sentinels}`;
      await s.enqueue(kind, { id, delayMs: horizonMs, attempts: 1 });
      await elapse(horizonMs);
      await poll(`the sentinel due in ${horizonMs} ms`, () => runs.some((r) => r.job.id === id));
    };

    it('runs an immediate job once with its data', async () => {
      const s = await open();
      const runs = recorder(s, 'immediate');
      await s.start();
      expect(await s.enqueue('immediate', { id: 'a', data: { n: 1, tags: ['x'] } })).toEqual({ enqueued: true });
      await elapse(0);
      await ran(runs, 1);
      await quiet(s, 'immediate', runs, 100);
      expect(real(runs).map((r) => r.job)).toEqual([{ id: 'a', kind: 'immediate', data: { n: 1, tags: ['x'] }, attempt: 1, lastTry: false, workerDeaths: 0 }]);
    });

    it('counts the jobs of the kinds it consumes by state: waiting, active, delayed (none for a kind it does not consume)', async () => {
      const s = await open();
      let release = () => {};
      const blocked = new Promise<void>((resolve) => {
        release = resolve;
      });
      const started: string[] = [];
      s.consume('counted', async (job) => {
        started.push(job.id);
        await blocked;
      });
      await s.enqueue('counted', { id: 'runs' });
      await s.enqueue('counted', { id: 'waits' });
      await s.enqueue('counted', { id: 'later', delayMs: 60_000 });
      await s.enqueue('other-kind', { id: 'x' });
      const byState = async () => Object.fromEntries((await s.jobCounts()).filter((c) => c.queue === 'counted').map((c) => [c.state, c.count]));
      expect(await byState()).toEqual({ waiting: 2, active: 0, delayed: 1 });
      expect((await s.jobCounts()).some((c) => c.queue === 'other-kind')).toBe(false);
      await s.start();
      await elapse(0);
      await poll(
        'one job to start',
        () => started.length,
        (n) => n === 1,
      );
      await poll('the counts to follow', byState, (c) => c.active === 1 && c.waiting === 1);
      expect(await byState()).toEqual({ waiting: 1, active: 1, delayed: 1 });
      release();
    });

    it('keeps ids with ":" and integer-like ids intact', async () => {
      const s = await open();
      const runs = recorder(s, 'ids');
      await s.start();
      for (const id of ['group-flush:t1:g:7', '42', '%3A', '#1']) await s.enqueue('ids', { id });
      await elapse(0);
      await ran(runs, 4);
      expect(runs.map((r) => r.job.id).sort()).toEqual(['#1', '%3A', '42', 'group-flush:t1:g:7']);
    });

    it('holds jobs until a consumer starts', async () => {
      const s = await open();
      await s.enqueue('late', { id: 'early-bird', data: 'x' });
      await elapse(100); // due long before anyone consumes
      const runs = recorder(s, 'late');
      await s.start();
      await elapse(0);
      const [run] = await ran(runs, 1);
      expect(run?.job.data).toBe('x');
    });

    it('does not run a delayed job early, and runs it once', async () => {
      const s = await open();
      const runs = recorder(s, 'delayed');
      await s.start();
      const t0 = now();
      await s.enqueue('delayed', { id: 'd', delayMs: 300 });
      await elapse(299);
      expect(runs.filter((r) => r.at < t0 + 300 - slack())).toEqual([]);
      await elapse(1);
      const [run] = await ran(runs, 1);
      expect(run!.at - t0).toBeGreaterThanOrEqual(300 - slack());
      await quiet(s, 'delayed', runs, 300);
      expect(real(runs)).toHaveLength(1);
    });

    it('dedupes an id that is pending, running or recently done', async () => {
      const s = await open();
      const runs = recorder(s, 'dedupe');
      await s.start();
      expect(await s.enqueue('dedupe', { id: 'x', delayMs: 200 })).toEqual({ enqueued: true });
      expect(await s.enqueue('dedupe', { id: 'x' })).toEqual({ enqueued: false });
      const burst = await Promise.all(Array.from({ length: 10 }, () => s.enqueue('dedupe', { id: 'y' })));
      expect(burst.filter((r) => r.enqueued)).toHaveLength(1);
      await elapse(200);
      await ran(runs, 2);
      expect(await s.enqueue('dedupe', { id: 'y' })).toEqual({ enqueued: false }); // finished, within retention
      await quiet(s, 'dedupe', runs, 200); // a second x would have been due by then
      expect(
        real(runs)
          .map((r) => r.job.id)
          .sort(),
      ).toEqual(['x', 'y']);
    });

    it('dedupes per kind, not across kinds', async () => {
      const s = await open();
      expect(await s.enqueue('kind-a', { id: 'same', delayMs: 10_000 })).toEqual({ enqueued: true });
      expect(await s.enqueue('kind-b', { id: 'same', delayMs: 10_000 })).toEqual({ enqueued: true });
    });

    it('retries a failing handler after the backoff, with visible attempt numbers', async () => {
      const s = await open();
      const runs = recorder(s, 'flaky', (job) => {
        if (job.attempt < 2) throw new Error('transient');
      });
      await s.start();
      await s.enqueue('flaky', { id: 'f', attempts: 3 });
      await elapse(0);
      const [first] = await ran(runs, 1);
      await elapse(CONTRACT_BACKOFF_MS - 1);
      expect(runs.filter((r) => r.at < first!.at + CONTRACT_BACKOFF_MS - slack())).toHaveLength(1);
      await elapse(1);
      const [, second] = await ran(runs, 2);
      expect(second!.at - first!.at).toBeGreaterThanOrEqual(CONTRACT_BACKOFF_MS - slack());
      await quiet(s, 'flaky', runs, 4 * CONTRACT_BACKOFF_MS); // a third attempt would come 2x the base after the second
      expect(real(runs).map((r) => r.job.attempt)).toEqual([1, 2]);
    });

    it('stops after the configured number of attempts', async () => {
      const s = await open();
      const runs = recorder(s, 'doomed', () => {
        throw new Error('permanent');
      });
      await s.start();
      await s.enqueue('doomed', { id: 'z', attempts: 2 });
      await elapse(CONTRACT_BACKOFF_MS);
      await ran(runs, 2);
      await quiet(s, 'doomed', runs, 4 * CONTRACT_BACKOFF_MS); // a third attempt would come 2x the base after the second
      expect(real(runs).map((r) => r.job.attempt)).toEqual([1, 2]);
      // The handler can tell its last try (a throw now is final) and that no worker died running it.
      expect(real(runs).map((r) => [r.job.lastTry, r.job.workerDeaths])).toEqual([
        [false, 0],
        [true, 0],
      ]);
    });

    it('cancels a delayed job before it runs', async () => {
      const s = await open();
      const runs = recorder(s, 'cancel');
      await s.start();
      await s.enqueue('cancel', { id: 'c', delayMs: 300 });
      expect(await s.cancel('cancel', 'c')).toBe(true);
      expect(await s.cancel('cancel', 'c')).toBe(false);
      expect(await s.cancel('cancel', 'never-existed')).toBe(false);
      await quiet(s, 'cancel', runs, 300);
      expect(real(runs)).toHaveLength(0);
      expect(await s.enqueue('cancel', { id: 'c' })).toEqual({ enqueued: true }); // the id is free again
      await elapse(0);
      await ran(runs, 1);
    });

    it('repeats every N ms, replaces a schedule by id, and stops on cancel', async () => {
      const s = await open();
      const runs = recorder(s, 'tick');
      await s.start();
      const t0 = now();
      await s.repeat('tick', { id: 'heartbeat', everyMs: 100, data: 'v1' });
      await elapse(0);
      await ran(runs, 1); // a fixed period fires once right away
      await elapse(99);
      // Not twice within the first period (a loaded machine may have run the first one late, near its end).
      expect(runs.filter((r) => r.at < t0 + 100 - slack()).length).toBeLessThanOrEqual(1);
      await elapse(101);
      const ticks = await ran(runs, 3);
      // Slots follow the first run (BullMQ keeps that offset too); on a manual clock, exactly.
      expect(ticks[2]!.at - t0).toBeGreaterThanOrEqual(200 - slack());
      if (clock()) expect(ticks.map((r) => r.at - t0)).toEqual([0, 100, 200]);
      expect(ticks.every((r) => r.job.id === 'heartbeat' && r.job.kind === 'tick' && r.job.data === 'v1')).toBe(true);
      await s.repeat('tick', { id: 'heartbeat', everyMs: 100, data: 'v2' });
      await elapse(100);
      await poll('a tick with the new data', () => runs.some((r) => r.job.data === 'v2'));
      expect(await s.cancel('tick', 'heartbeat')).toBe(true);
      const seen = real(runs).length;
      await quiet(s, 'tick', runs, 300);
      // BullMQ may already have moved the next occurrence to the wait list; in process, nothing is left.
      expect(real(runs).length - seen).toBeLessThanOrEqual(clock() ? 0 : 1);
    });

    it('re-declaring an unchanged schedule adds no runs', async () => {
      const s = await open();
      const runs = recorder(s, 'boot');
      await s.start();
      const t0 = now();
      const declare = () => s.repeat('boot', { id: 'nightly-ish', everyMs: 1000, data: { v: 1 } });
      for (let i = 0; i < 5; i++) await declare();
      await elapse(0);
      await ran(runs, 1);
      await elapse(250);
      await declare(); // a worker booting later keeps the schedule's timing
      await quiet(s, 'boot', runs, 500); // an extra immediate run from any declaration would be in by then
      await elapse(249);
      expect(real(runs).filter((r) => r.at < t0 + 1000 - slack())).toHaveLength(1);
      await elapse(1);
      if (clock()) expect(real(runs).map((r) => r.at - t0)).toEqual([0, 1000]);
    });

    it('leaves a schedule stored with other timings as it is when asked to change only an unchanged one (a rolling deploy)', async () => {
      const s = await open();
      const runs = recorder(s, 'fixed');
      await s.start();
      const t0 = now();
      await s.repeat('fixed', { id: 'sweep', everyMs: 1000 });
      await elapse(0);
      await ran(runs, 1);
      // Another version's schedule check: re-timing to 200 ms would run it at once and every 200 ms.
      await s.repeat('fixed', { id: 'sweep', everyMs: 200, onlyIfUnchanged: true });
      await quiet(s, 'fixed', runs, 600);
      expect(real(runs).filter((r) => r.at < t0 + 1000 - slack())).toHaveLength(1);
      // Its own timings, or none stored: declared as usual.
      await s.repeat('fixed', { id: 'sweep', everyMs: 1000, onlyIfUnchanged: true });
      await s.repeat('fixed', { id: 'other', everyMs: 1000, onlyIfUnchanged: true });
      await elapse(0);
      await poll('the new schedule to run', () => real(runs).some((r) => r.job.id === 'other'));
    });

    it("hands jobs the trace context they were enqueued or scheduled with, and keeps a schedule's when it is re-declared without one", async () => {
      const s = await open();
      const once = recorder(s, 'traced-once');
      const ticks = recorder(s, 'traced-tick');
      await s.start();
      const trace = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
      await s.enqueue('traced-once', { id: 'one', data: 1, trace });
      await s.enqueue('traced-once', { id: 'linked', data: 2, trace, traceLink: true });
      await s.repeat('traced-tick', { id: 'tick', everyMs: 100, data: 'd', trace });
      await elapse(0);
      await ran(once, 2);
      await ran(ticks, 1);
      const byId = (id: string) => real(once).find((r) => r.job.id === id)?.job;
      expect(byId('one')).toMatchObject({ trace });
      expect(byId('one')?.scheduled).toBeUndefined();
      expect(byId('one')?.traceLink).toBeUndefined();
      expect(byId('linked')).toMatchObject({ trace, traceLink: true });
      expect(real(ticks)[0]?.job).toMatchObject({ trace, scheduled: true });
      // A worker booting later declares it again, with new data and no trace.
      await s.repeat('traced-tick', { id: 'tick', everyMs: 100, data: 'e' });
      await elapse(100);
      const later = await poll('a tick with the new data', () => real(ticks).find((r) => r.job.data === 'e'));
      expect(later?.job.trace).toEqual(trace);
      await s.cancel('traced-tick', 'tick');
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
      // Two schedulers with the same parts (a worker, a queue, a producer) and nothing running.
      const idle: Scheduler[] = [];
      for (let i = 0; i < 2; i++) {
        const other = await open();
        other.consume('slow', async () => {});
        await other.start();
        await other.enqueue('slow', { id: 'later', delayMs: 60_000 });
        idle.push(other);
      }
      const s = await open();
      let release = (): void => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      let started = false;
      let finished = false;
      s.consume('slow', async () => {
        started = true;
        await gate;
        finished = true;
      });
      await s.start();
      await s.enqueue('slow', { id: 's' });
      await elapse(0);
      await poll('the handler to start', () => started);
      let closed = false;
      const closing = s.close().then(() => (closed = true));
      // Two of the same shutdowns, one after the other: a close that did not wait would be done by then.
      for (const other of idle) await other.close();
      expect(closed).toBe(false);
      release();
      await closing;
      expect(finished).toBe(true);
      await s.close(); // idempotent
    });
  });
}
