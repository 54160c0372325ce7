import type { TestProject } from 'vitest/node';
import { startRedisCluster } from './redis-cluster.js';
import { startRedisServer } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    /** `127.0.0.1:<port>` of each node of the run's Redis Cluster. */
    redisClusterNodes: string[];
  }
}

/**
 * One private redis-server and one private 3-primary Redis Cluster for the whole run; each test
 * isolates itself with a unique key prefix.
 * @public vitest's globalSetup (vitest.config.ts) loads it by path.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [redis, cluster] = await Promise.all([startRedisServer(), startRedisCluster()]);
  project.provide('redisUrl', redis.url);
  project.provide('redisClusterNodes', cluster.nodes);
  process.env.SLUICE_TEST_REDIS_URL = redis.url;
  return async () => {
    await Promise.all([redis.stop(), cluster.stop()]);
  };
}
