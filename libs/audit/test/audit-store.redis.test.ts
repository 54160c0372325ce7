import { RedisStateStore } from '@sluice/state';
import { testRedisUrl, uniquePrefix } from '../../../test/support/redis-url.js';
import { auditStoreContract } from './audit-store.contract.js';

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
      await deletePrefix(state, prefix);
      await Promise.all([state, ...others].map((s) => s.close()));
    },
  };
});

/** Tests share one server and isolate by prefix: drop this test's keys. */
async function deletePrefix(store: RedisStateStore, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await store.client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await store.client.del(...keys);
  } while (cursor !== '0');
}
