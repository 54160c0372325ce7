import { RedisStateStore, type RedisTarget } from '@sluice/state';
import { deleteKeys } from './delete-keys.js';
import { testRedisClusterNodes, testRedisUrl } from './redis-url.js';

/** The run's two Redis deployments: a single primary, and a 3-primary Redis Cluster. */
export const REDIS_TOPOLOGIES = ['redis', 'redis-cluster'] as const;
export type RedisTopology = (typeof REDIS_TOPOLOGIES)[number];

function redisTargetOf(topology: RedisTopology): RedisTarget {
  return topology === 'redis' ? { url: testRedisUrl() } : { clusterNodes: testRedisClusterNodes() };
}

export function connectRedisStore(topology: RedisTopology, prefix: string): Promise<RedisStateStore> {
  return RedisStateStore.connect({ ...redisTargetOf(topology), prefix });
}

/** Deletes the prefix's keys through `store` (every primary of a Cluster), then closes it. */
export async function dropAndClose(store: RedisStateStore, prefix: string): Promise<void> {
  await deleteKeys(store.client, `${prefix}:*`);
  await store.close();
}
