import { Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { deleteKeys } from '../../../../test/support/delete-keys.js';
import { testRedisUrl, uniquePrefix } from '../../../../test/support/redis-url.js';
import { RedisStateStore } from '../../src/redis/redis-state-store.js';
import { recordRepositoryContract } from './records.contract.js';

const admin = new Redis(testRedisUrl());
afterAll(async () => {
  await admin.quit();
});

// Two connections on one prefix: two replicas sharing one Redis.
recordRepositoryContract('redis', async () => {
  const prefix = uniquePrefix();
  const stores = await Promise.all([0, 1].map(() => RedisStateStore.connect({ url: testRedisUrl(), prefix })));
  return {
    stores: [stores[0]!, stores[1]!],
    cleanup: async () => {
      await Promise.all(stores.map((s) => s.close()));
      await deleteKeys(admin, `${prefix}:*`);
    },
  };
});
