import { REDIS_TOPOLOGIES, connectRedisStore } from '../../../../test/support/redis-topologies.js';
import { deleteKeys } from '../../../../test/support/delete-keys.js';
import { uniquePrefix } from '../../../../test/support/redis-url.js';
import { recordRepositoryContract } from './records.contract.js';

// Two connections on one prefix: two replicas sharing one Redis (or one Redis Cluster).
for (const topology of REDIS_TOPOLOGIES) {
  recordRepositoryContract(topology, async () => {
    const prefix = uniquePrefix();
    const stores = await Promise.all([0, 1].map(() => connectRedisStore(topology, prefix)));
    return {
      stores: [stores[0]!, stores[1]!],
      cleanup: async () => {
        await deleteKeys(stores[0]!.client, `${prefix}:*`);
        await Promise.all(stores.map((s) => s.close()));
      },
    };
  });
}
