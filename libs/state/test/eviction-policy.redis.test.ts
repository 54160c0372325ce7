import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RunningRedis } from '../../../test/support/redis-server.js';
import { RedisStateStore } from '../src/redis/redis-state-store.js';

/** A Redis that may evict keys is refused at start: full, it would drop dedup keys, records and jobs without a word. */
describe('the eviction policy check at connect', () => {
  let evicting: RunningRedis;
  beforeAll(async () => {
    evicting = await startRedisServer({ args: ['--maxmemory-policy', 'volatile-lru', '--maxmemory', '100mb'] });
  });
  afterAll(() => evicting?.stop());

  it('refuses a Redis whose maxmemory-policy may evict keys, naming the policy and the way out', async () => {
    await expect(RedisStateStore.connect({ url: evicting.url, prefix: 'evict-test' })).rejects.toThrow(
      /maxmemory-policy volatile-lru with a maxmemory limit\).*Set maxmemory-policy noeviction.*state\.allow_eviction: true/,
    );
  });

  it('starts on it when told to, and on a Redis without a memory limit without being told', async () => {
    const allowed = await RedisStateStore.connect({ url: evicting.url, prefix: 'evict-test', allowEviction: true });
    await allowed.close();
    // Without a memory limit nothing is evicted, whatever the policy.
    const keeping = await startRedisServer({ args: ['--maxmemory-policy', 'allkeys-lru'] });
    try {
      const store = await RedisStateStore.connect({ url: keeping.url, prefix: 'evict-test' });
      await store.close();
    } finally {
      await keeping.stop();
    }
  });
});
