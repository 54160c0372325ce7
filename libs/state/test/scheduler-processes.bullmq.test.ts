import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testRedisUrl, uniquePrefix } from '../../../test/support/redis-url.js';
import { BullMqScheduler } from '../src/bullmq/bullmq-scheduler.js';
import { bullPrefix } from '../src/bullmq/bullmq-naming.js';
import type { Job } from '../src/scheduler.js';
import { spawnFixture, stopChild, type Child } from './support/child-process.js';
import { deleteKeys } from '../../../test/support/delete-keys.js';
import { poll } from '../../../test/support/poll.js';

/** Separate OS processes sharing one Redis: what API replicas and workers really are. */
describe('BullMqScheduler across processes', () => {
  const admin = new Redis(testRedisUrl());
  let prefix = '';
  let children: Child[] = [];
  let schedulers: BullMqScheduler[] = [];
  const env = (): Record<string, string> => ({ SLUICE_REDIS_URL: testRedisUrl(), SLUICE_PREFIX: prefix, LOCK_MS: '1000', STALLED_MS: '500' });
  const child = (args: string[]): Child => {
    const c = spawnFixture('scheduler-child.ts', args, env());
    children.push(c);
    return c;
  };
  const scheduler = (): BullMqScheduler => {
    const s = new BullMqScheduler({ url: testRedisUrl(), prefix, lockDurationMs: 1000, stalledIntervalMs: 500 });
    schedulers.push(s);
    return s;
  };

  beforeEach(() => {
    prefix = uniquePrefix();
  });
  afterEach(async () => {
    await Promise.all(children.map((c) => stopChild(c, 'SIGKILL')));
    await Promise.all(schedulers.map((s) => s.close()));
    children = [];
    schedulers = [];
    await deleteKeys(admin, `${bullPrefix(prefix)}:*`);
    await deleteKeys(admin, `${prefix}:*`);
  });
  afterAll(() => admin.quit());

  it('two processes enqueuing the same ids at once create and run each job exactly once', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `group-flush:tenant-a:g${i}:1`);
    const producers = [child(['enqueue', 'flush', ids.join(',')]), child(['enqueue', 'flush', ids.join(',')])];
    const runs: Job[] = [];
    const worker = scheduler();
    worker.consume('flush', async (job) => void runs.push(job), { concurrency: 4 });
    await worker.start();
    await Promise.all(producers.map((p) => p.waitFor((m) => m.ready === true)));
    for (const p of producers) p.proc.stdin?.write('go\n'); // release both at once
    const reports = await Promise.all(producers.map((p) => p.waitFor((m) => m.enqueued !== undefined)));
    for (const id of ids) {
      const created = reports.filter((r) => (r.enqueued as Record<string, boolean>)[id] === true);
      expect(created, `exactly one creator for ${id}`).toHaveLength(1);
    }
    await poll('every job to run', () => runs.length >= ids.length);
    // A duplicate would have been created before the producers reported, so it waits ahead of a job enqueued now.
    await worker.enqueue('flush', { id: 'sentinel' });
    await poll('the sentinel job', () => runs.some((j) => j.id === 'sentinel'));
    expect(
      runs
        .map((j) => j.id)
        .filter((id) => id !== 'sentinel')
        .sort(),
    ).toEqual([...ids].sort());
    expect(await Promise.all(producers.map((p) => p.exited))).toEqual([0, 0]);
  });

  it('a job whose worker is SIGKILLed mid-run is taken over by another worker and completes once', async () => {
    const producer = scheduler();
    const doomed = child(['consume', 'approve', 'hang']);
    await doomed.waitFor((m) => m.ready === true);
    expect(await producer.enqueue('approve', { id: 'approval:t1:42', data: { n: 1 } })).toEqual({ enqueued: true });
    const first = await doomed.waitFor((m) => m.started === 'approval:t1:42');
    expect(first).toMatchObject({ attempt: 1, workerDeaths: 0, lastTry: false });
    await stopChild(doomed, 'SIGKILL');

    // The lock (1 s) lapses, a stalled-job check (every 0.5 s) moves the job back to wait.
    const rescuer = child(['consume', 'approve', 'count']);
    const done = await rescuer.waitFor((m) => m.done === 'approval:t1:42');
    expect(done.attempt).toBe(2); // a rerun after a crash counts as a new attempt
    // ...and as a worker death, not as a try: a throw would still be retried.
    expect(rescuer.messages.find((m) => m.started === 'approval:t1:42')).toMatchObject({ workerDeaths: 1, lastTry: false });
    // Nothing may pick the job up again: a job due after two more stall checks (every 0.5 s) runs
    // after anything those checks would have put back in the queue.
    await producer.enqueue('approve', { id: 'sentinel', delayMs: 1500 });
    await rescuer.waitFor((m) => m.done === 'sentinel');
    expect(rescuer.messages.filter((m) => m.started === 'approval:t1:42')).toHaveLength(1);
    expect(await admin.get(`${prefix}:test:done:approval:t1:42`)).toBe('1');
    // Finished and remembered: the same id is not enqueued again.
    expect(await producer.enqueue('approve', { id: 'approval:t1:42' })).toEqual({ enqueued: false });
  });
});
