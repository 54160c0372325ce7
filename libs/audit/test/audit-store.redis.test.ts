import { RedisStateStore } from '@sluice/state';
import { testRedisUrl, uniquePrefix } from '../../../test/support/redis-url.js';
import { auditStoreContract } from './audit-store.contract.js';
import { deleteKeys } from '../../../test/support/delete-keys.js';

auditStoreContract('redis', async () => {
  const prefix = uniquePrefix();
  const connect = () => RedisStateStore.connect({ url: testRedisUrl(), prefix });
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
