import { ManualClock } from '@sluice/core';
import { REDIS_TOPOLOGIES, connectRedisStore, dropAndClose } from '../../../test/support/redis-topologies.js';
import { uniquePrefix } from '../../../test/support/redis-url.js';
import { AnalyticsRollups } from '../src/analytics/index.js';
import { analyticsContract } from './analytics.contract.js';
import { END } from './analytics.dataset.js';

// A manual clock at the data set's end: TTLs are then ~400 days, counted by Redis from now.
for (const topology of REDIS_TOPOLOGIES) {
  analyticsContract(topology, async () => {
    const prefix = uniquePrefix();
    const store = await connectRedisStore(topology, prefix);
    return {
      rollups: new AnalyticsRollups({ state: store, clock: new ManualClock(END) }),
      cleanup: () => dropAndClose(store, prefix),
    };
  });
}
