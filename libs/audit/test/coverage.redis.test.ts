import { ManualClock } from '@sluice/core';
import { RedisStateStore } from '@sluice/state';
import { Redis } from 'ioredis';
import { testRedisUrl, uniquePrefix } from '../../../test/support/redis-url.js';
import { CoverageRollups } from '../src/coverage/index.js';
import { coverageContract } from './coverage.contract.js';
import { END } from './coverage.dataset.js';

async function deletePrefix(prefix: string): Promise<void> {
  const admin = new Redis(testRedisUrl(), { maxRetriesPerRequest: 2 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await admin.del(...keys);
    } while (cursor !== '0');
  } finally {
    await admin.quit();
  }
}

// A manual clock at the data set's end: TTLs are then ~400 days, counted by Redis from now.
coverageContract('redis', async () => {
  const prefix = uniquePrefix();
  const store = await RedisStateStore.connect({ url: testRedisUrl(), prefix });
  return {
    rollups: new CoverageRollups({ state: store, clock: new ManualClock(END) }),
    cleanup: async () => {
      await store.close();
      await deletePrefix(prefix);
    },
  };
});
