import { describe, expect, it } from 'vitest';
import { InProcessScheduler } from '../src/memory/in-process-scheduler.js';
import { schedulerContract, sleep, waitFor } from './contract/scheduler.contract.js';

schedulerContract('memory', async () => {
  const scheduler = new InProcessScheduler({ backoffBaseMs: 50 });
  return { scheduler, cleanup: () => scheduler.close() };
});

describe('InProcessScheduler specifics', () => {
  it('forgets finished ids after retention, so the id can be enqueued again', async () => {
    const s = new InProcessScheduler({ retentionMs: 100 });
    const runs: string[] = [];
    s.consume('k', async (job) => void runs.push(job.id));
    await s.start();
    try {
      await s.enqueue('k', { id: 'once' });
      await waitFor('the first run', () => runs.length === 1);
      expect(await s.enqueue('k', { id: 'once' })).toEqual({ enqueued: false });
      await sleep(150);
      expect(await s.enqueue('k', { id: 'once' })).toEqual({ enqueued: true });
      await waitFor('the second run', () => runs.length === 2);
    } finally {
      await s.close();
    }
  });

  it('refuses consume() after start() and work after close()', async () => {
    const s = new InProcessScheduler();
    await s.start();
    expect(() => s.consume('k', async () => {})).toThrow(/before start/);
    await s.close();
    await expect(s.enqueue('k', { id: 'x' })).rejects.toThrow(/closed/);
  });
});
