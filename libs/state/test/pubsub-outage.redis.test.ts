import { describe, expect, it } from 'vitest';
import { poll } from '../../../test/support/poll.js';
import { startRedisServer } from '../../../test/support/redis-server.js';
import { uniquePrefix } from '../../../test/support/redis-url.js';
import { RedisStateStore } from '../src/redis/redis-state-store.js';

/*
 * A first subscribe while Redis is away: the main client fails commands at once by then (its
 * offline queue off), and the subscriber connection, made from it, must not inherit that — the
 * subscribe waits for Redis and the messages arrive once it is back.
 */
describe('pub/sub through an outage', () => {
  it('holds a first subscribe made while Redis is away until it is back, then delivers', async () => {
    let redis = await startRedisServer();
    const store = await RedisStateStore.connect({ url: redis.url, prefix: uniquePrefix() });
    try {
      await redis.stop();
      // Past the grace after which the main client stops queueing commands: a read fails at once.
      await poll('the main client to fail fast', async () => {
        const started = Date.now();
        const failed = await store.get({ kind: 'k', namespace: 'n', tenant: 't', id: 'x' }).then(
          () => false,
          () => true,
        );
        return failed && Date.now() - started < 100;
      });
      const heard: string[] = [];
      const subscribed = store.subscribe('events', (m) => heard.push(m));
      redis = await startRedisServer({ port: redis.port });
      await subscribed;
      await poll(
        'a message to arrive',
        async () => {
          // The main client may still be reconnecting (failing at once): try again.
          await store.publish('events', 'after').catch(() => {});
          return heard.length > 0;
        },
        { timeoutMs: 5000, intervalMs: 100 },
      );
      expect(heard[0]).toBe('after');
    } finally {
      await store.close();
      await redis.stop();
    }
  });
});
