import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../../../test/support/free-port.js';
import { testRedisUrl, uniquePrefix } from '../../../test/support/redis-url.js';
import { Queue } from 'bullmq';
import { BullMqScheduler } from '../src/bullmq/bullmq-scheduler.js';
import { hasOverdueWork } from '../src/bullmq/worker-watchdog.js';
import { bullPrefix } from '../src/bullmq/bullmq-naming.js';
import { nextCronTime } from '../src/scheduler-rules.js';
import { CONTRACT_BACKOFF_MS, schedulerContract } from './contract/scheduler.contract.js';
import { deleteKeys } from '../../../test/support/delete-keys.js';

const admin = new Redis(testRedisUrl());
afterAll(() => admin.quit());

schedulerContract('bullmq', async () => {
  const prefix = uniquePrefix();
  const scheduler = new BullMqScheduler({ url: testRedisUrl(), prefix, backoffBaseMs: CONTRACT_BACKOFF_MS });
  return {
    scheduler,
    async cleanup() {
      await scheduler.close();
      await deleteKeys(admin, `${bullPrefix(prefix)}:*`);
    },
  };
});

describe('BullMqScheduler specifics', () => {
  it('keeps every BullMQ key under the hash-tagged {<prefix>}:bull namespace', async () => {
    const prefix = uniquePrefix();
    const s = new BullMqScheduler({ url: testRedisUrl(), prefix });
    try {
      await s.enqueue('group-flush', { id: 'g:1', delayMs: 60_000 });
      await s.repeat('sweep', { id: 'nightly', cron: '0 3 * * *' });
      const keys = await admin.keys(`*${prefix}*`);
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.every((k) => k.startsWith(`{${prefix}}:bull:group-flush:`) || k.startsWith(`{${prefix}}:bull:sweep:`))).toBe(true);
      expect(keys).toContain(`{${prefix}}:bull:group-flush:g%3A1`);
    } finally {
      await s.close();
      await deleteKeys(admin, `${bullPrefix(prefix)}:*`);
    }
  });

  it("computes cron schedules' next times with nextCronTime, as the memory backend does, not with BullMQ's own cron-parser", async () => {
    const prefix = uniquePrefix();
    const s = new BullMqScheduler({ url: testRedisUrl(), prefix });
    try {
      // Chile's DST starts at midnight: BullMQ's own copy of cron-parser skipped such a day (a year late).
      const rule = { cron: '0 0 5 9 *', timezone: 'America/Santiago' };
      const before = Date.now();
      await s.repeat('rec', { id: 'santiago', ...rule });
      const next = Number(await admin.zscore(`{${prefix}}:bull:rec:repeat`, 'santiago'));
      expect([nextCronTime(rule, before), nextCronTime(rule, Date.now())]).toContain(next);
    } finally {
      await s.close();
      await deleteKeys(admin, `${bullPrefix(prefix)}:*`);
    }
  });

  it('finds the next run where cron-parser gives up (a 30-minute DST change), instead of throwing', () => {
    // Lord Howe falls back from 02:00 to 01:30 on 2027-04-04: the next 02:00 is 15:30 UTC the day before.
    const rule = { cron: '0 2 * * *', timezone: 'Australia/Lord_Howe' };
    expect(new Date(nextCronTime(rule, Date.parse('2027-04-02T15:00:00Z'))).toISOString()).toBe('2027-04-03T15:30:00.000Z');
    expect(new Date(nextCronTime(rule, Date.parse('2027-04-03T15:30:00Z'))).toISOString()).toBe('2027-04-04T15:30:00.000Z');
    // Weekly and monthly: the next run is days past the stretch the forward search cannot cross.
    expect(new Date(nextCronTime({ ...rule, cron: '0 2 * * 0' }, Date.parse('2026-03-29T15:00:00Z'))).toISOString()).toBe('2026-04-04T15:30:00.000Z');
    expect(new Date(nextCronTime({ ...rule, cron: '0 2 5 * *' }, Date.parse('2026-03-05T15:00:00Z'))).toISOString()).toBe('2026-04-04T15:30:00.000Z');
    expect(() => nextCronTime({ cron: '0 2 31 2 *', timezone: 'UTC' }, Date.now())).toThrow();
  });

  it('reports connection errors through onError, rate-limited, and writes nothing to stderr', async () => {
    const stderr = vi.spyOn(process.stderr, 'write');
    const consoleError = vi.spyOn(console, 'error');
    const reports: { message: string; suppressed: number }[] = [];
    const s = new BullMqScheduler({
      url: `redis://127.0.0.1:${await freePort()}`,
      prefix: uniquePrefix(),
      onError: (err, { suppressed }) => reports.push({ message: err.message, suppressed }),
    });
    try {
      // Two queues on the shared producer connection: each re-emits the connection's errors.
      const enqueued = Promise.all([s.enqueue('group-flush', { id: 'g:1' }), s.enqueue('sweep', { id: 's:1' })]).catch(() => {});
      // ioredis keeps reconnecting (every 50-2000 ms), failing the same way each time.
      await new Promise((r) => setTimeout(r, 1500));
      expect(reports.length).toBeGreaterThan(0);
      expect(reports.some((r) => r.message.includes('ECONNREFUSED'))).toBe(true);
      expect(new Set(reports.map((r) => r.message)).size).toBe(reports.length); // each message once per window
      await s.close();
      await enqueued;
      expect(stderr).not.toHaveBeenCalled();
      expect(consoleError).not.toHaveBeenCalled();
    } finally {
      stderr.mockRestore();
      consoleError.mockRestore();
    }
  });

  it('replaces a worker that takes no job while its queue has work (one left stuck by a Cluster failover)', async () => {
    const prefix = uniquePrefix();
    const reports: string[] = [];
    const s = new BullMqScheduler({ url: testRedisUrl(), prefix, watchdogIdleMs: 600, onError: (err) => reports.push(err.message) });
    const ran: string[] = [];
    s.consume('group-flush', async (job) => {
      ran.push(job.id);
    });
    try {
      await s.start();
      await s.enqueue('group-flush', { id: 'j:before' });
      await vi.waitFor(() => expect(ran).toEqual(['j:before']), { timeout: 5000 });
      // A worker that stopped fetching, as BullMQ's did when its blocking read sat on a dead node's connection.
      const internals = s as unknown as { workers: Map<string, { worker: { pause(doNotWaitActive?: boolean): Promise<void> } }> };
      await internals.workers.get('group-flush')?.worker.pause(true);
      await s.enqueue('group-flush', { id: 'j:due-now' });
      await s.enqueue('group-flush', { id: 'j:delayed', delayMs: 200 });
      await vi.waitFor(() => expect(ran.sort()).toEqual(['j:before', 'j:delayed', 'j:due-now']), { timeout: 10_000, interval: 100 });
      expect(reports.filter((m) => m.includes('group-flush worker took no job'))).toHaveLength(1);
    } finally {
      await s.close();
      await deleteKeys(admin, `${bullPrefix(prefix)}:*`);
    }
  });

  it('tells overdue work by the delayed set (a retried job is due at its backoff, not at creation plus delay)', async () => {
    const prefix = uniquePrefix();
    const queue = new Queue('group-flush', { connection: admin.duplicate(), prefix: bullPrefix(prefix) });
    try {
      const added = await queue.add('group-flush', {}, { jobId: 'j%3Aa', delay: 60_000 });
      const now = Date.now();
      expect(await hasOverdueWork(queue, now)).toBe(false);
      expect(await hasOverdueWork(queue, now + 60_000 + 6000)).toBe(true);
      // Moved (as a retry's backoff moves it) an hour on: not overdue when its first due time has passed.
      await added.changeDelay(3_600_000);
      expect(await hasOverdueWork(queue, now + 60_000 + 6000)).toBe(false);
      await queue.add('group-flush', {}, { jobId: 'j%3Ab' });
      expect(await hasOverdueWork(queue, now)).toBe(true); // a waiting job
    } finally {
      await queue.close();
      await deleteKeys(admin, `${bullPrefix(prefix)}:*`);
    }
  });

  it('leaves an idle worker alone when its queue has nothing due', async () => {
    const prefix = uniquePrefix();
    const reports: string[] = [];
    const s = new BullMqScheduler({ url: testRedisUrl(), prefix, watchdogIdleMs: 300, onError: (err) => reports.push(err.message) });
    s.consume('group-flush', async () => {});
    try {
      await s.start();
      await s.enqueue('group-flush', { id: 'j:later', delayMs: 60_000 });
      await new Promise((r) => setTimeout(r, 1500));
      expect(reports).toEqual([]);
    } finally {
      await s.close();
      await deleteKeys(admin, `${bullPrefix(prefix)}:*`);
    }
  });

  it('a handler still running when close() begins may enqueue its next job (a chain step its successor)', async () => {
    const prefix = uniquePrefix();
    const s = new BullMqScheduler({ url: testRedisUrl(), prefix });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const next: Promise<unknown>[] = [];
    s.consume('step', async () => {
      started();
      await gate;
      const enqueued = s.enqueue('step', { id: 'successor', delayMs: 60_000 });
      next.push(enqueued);
      await enqueued;
    });
    try {
      await s.start();
      await s.enqueue('step', { id: 'first' });
      await running;
      const closed = s.close();
      release();
      await closed;
      await expect(next[0]).resolves.toEqual({ enqueued: true });
      expect(await admin.exists(`{${prefix}}:bull:step:successor`)).toBe(1);
      await expect(s.enqueue('step', { id: 'after-close' })).rejects.toThrow('scheduler is closed');
    } finally {
      await s.close();
      await deleteKeys(admin, `${bullPrefix(prefix)}:*`);
    }
  });

  it('a producer that never enqueues never connects', async () => {
    const s = new BullMqScheduler({ url: 'redis://127.0.0.1:1', prefix: uniquePrefix() });
    await s.close(); // would hang or throw if it had tried to reach the (closed) port
  });
});
