import type { RedisStateStore } from '@sluice/state';
import { deleteKeys } from '../../../test/support/delete-keys.js';
import { REDIS_TOPOLOGIES, connectRedisStore } from '../../../test/support/redis-topologies.js';
import { uniquePrefix } from '../../../test/support/redis-url.js';
import { auditStoreContract } from './audit-store.contract.js';

for (const topology of REDIS_TOPOLOGIES) {
  auditStoreContract(topology, async () => {
    const prefix = uniquePrefix();
    const connect = () => connectRedisStore(topology, prefix);
    const state = await connect();
    const others: RedisStateStore[] = [];
    return {
      state,
      connectAnother: async () => {
        const other = await connect();
        others.push(other);
        return other;
      },
      cleanup: async () => {
        await deleteKeys(state.client, `${prefix}:*`);
        await Promise.all([state, ...others].map((s) => s.close()));
      },
    };
  });
}
