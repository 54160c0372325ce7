import { ManualClock } from '@sluice/core';
import { REDIS_TOPOLOGIES, connectRedisStore, dropAndClose } from '../../../test/support/redis-topologies.js';
import { uniquePrefix } from '../../../test/support/redis-url.js';
import { CoverageRollups } from '../src/coverage/index.js';
import { coverageContract } from './coverage.contract.js';
import { END } from './coverage.dataset.js';

// A manual clock at the data set's end: TTLs are then ~400 days, counted by Redis from now.
for (const topology of REDIS_TOPOLOGIES) {
  coverageContract(topology, async () => {
    const prefix = uniquePrefix();
    const store = await connectRedisStore(topology, prefix);
    return {
      rollups: new CoverageRollups({ state: store, clock: new ManualClock(END) }),
      cleanup: () => dropAndClose(store, prefix),
    };
  });
}
