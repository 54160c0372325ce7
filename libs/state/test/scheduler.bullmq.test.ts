import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { testRedisUrl, uniquePrefix } from '../../../test/support/redis-url.js';
import { BullMqScheduler } from '../src/bullmq/bullmq-scheduler.js';
import { bullPrefix } from '../src/bullmq/bullmq-naming.js';
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

  it('a producer that never enqueues never connects', async () => {
    const s = new BullMqScheduler({ url: 'redis://127.0.0.1:1', prefix: uniquePrefix() });
    await s.close(); // would hang or throw if it had tried to reach the (closed) port
  });
});
