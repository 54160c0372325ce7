import { ManualClock } from '@sluice/core';
import { RedisStateStore } from '@sluice/state';
import { deletePrefix } from '../../../test/support/delete-keys.js';
import { testRedisUrl, uniquePrefix } from '../../../test/support/redis-url.js';
import { CoverageRollups } from '../src/coverage/index.js';
import { coverageContract } from './coverage.contract.js';
import { END } from './coverage.dataset.js';

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
