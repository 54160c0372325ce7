import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poll } from '../../../test/support/poll.js';
import { startRedisSentinel, type RunningRedisSentinel } from '../../../test/support/redis-sentinel.js';
import { uniquePrefix } from '../../../test/support/redis-url.js';
import type { Redis } from 'ioredis';
import { createStateStore } from '../src/create-state-store.js';
import { closeClient, createClient, waitUntilReady } from '../src/redis/connection.js';
import { RedisStateStore, type RedisStateStoreOptions } from '../src/redis/redis-state-store.js';
import type { StateKey } from '../src/state-store.js';
import { stateStoreContract } from './contract/state-store.contract.js';
import { REDIS_CONTRACT_OPTIONS, redisContract } from './support/redis-contract.js';

/*
 * The StateStore on a password-protected primary found through Sentinels: the contract, the
 * replica wait (state.wait_replicas), and a failover under writes (the primary SIGKILLed; the
 * Sentinels promote the replica and the store carries on against it).
 */

let set: RunningRedisSentinel;

beforeAll(async () => {
  set = await startRedisSentinel();
}, 60_000);
afterAll(async () => {
  await set?.stop();
});

function connect(prefix: string, extra: Partial<RedisStateStoreOptions> = {}): Promise<RedisStateStore> {
  return RedisStateStore.connect({ sentinels: set.sentinels, sentinelName: set.name, password: set.password, prefix, ...extra });
}

stateStoreContract(
  'redis-sentinel',
  redisContract((prefix) => connect(prefix)),
  REDIS_CONTRACT_OPTIONS,
);

describe('RedisStateStore through Sentinels', () => {
  const k = (id: string): StateKey => ({ kind: 'sentinel', namespace: 'n', tenant: 't', id });

  it('names the Sentinels, not a password, when the primary cannot be found', async () => {
    const failing = createStateStore({
      backend: 'redis',
      sentinels: ['127.0.0.1:1'],
      sentinelName: 'nobody',
      password: 'secret',
      prefix: 'x',
      connectTimeoutMs: 300,
    });
    await expect(failing).rejects.toThrow(/cannot connect to the Redis primary "nobody" of the Sentinels at 127\.0\.0\.1:1/);
    await expect(failing).rejects.not.toThrow(/secret/);
  });

  it('answers a write that must survive a failover once a replica has it, and counts one that timed out waiting', async () => {
    const short: number[] = [];
    const one = await connect(uniquePrefix(), { waitReplicas: { replicas: 1, timeoutMs: 2000, onShort: (n) => short.push(n) } });
    const two = await connect(uniquePrefix(), { waitReplicas: { replicas: 2, timeoutMs: 200, onShort: (n) => short.push(n) } });
    try {
      expect(await one.setIfAbsent(k('dedup'), 'x')).toBe(true);
      expect((await one.incrementWindow(k('quota'), { windowMs: 60_000, limit: 5 })).allowed).toBe(true);
      expect(short).toEqual([]);
      // Only one replica exists: the wait for two times out, and the write is answered anyway.
      const started = Date.now();
      expect(await two.setIfAbsent(k('dedup'), 'x')).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      expect(short).toEqual([1]);
    } finally {
      await one.close();
      await two.close();
    }
  });

  /*
   * ioredis's failover detector answers a +switch-master by dropping the connection attempt under
   * way; caught while the Sentinels are asked for the primary (a client reconnecting after its
   * primary died), the attempt fails and ioredis ended the client for good: every command
   * "Connection is closed.", one replica in five of a failover test. Here the detector's call is
   * made at that moment, on a client and on a duplicate (the pub/sub and BullMQ connections).
   */
  it('connects again when a failover notice aborts a reconnect under way', async () => {
    const target = { sentinels: set.sentinels, sentinelName: set.name, password: set.password };
    const client = createClient(target) as Redis;
    const duplicate = client.duplicate();
    try {
      for (const c of [client, duplicate]) {
        c.on('error', () => {});
        await waitUntilReady(c, target, 5000);
        const connector = (c as unknown as { connector: { disconnect(): void } }).connector;
        c.once('connecting', () => connector.disconnect());
        const ended = new Promise((resolve) => c.once('end', resolve));
        c.disconnect(true);
        await ended;
        await poll('the client to connect again', () => c.status === 'ready', { timeoutMs: 5000, intervalMs: 20 });
        expect(await c.ping()).toBe('PONG');
      }
    } finally {
      await closeClient(duplicate);
      await closeClient(client);
    }
  });

  // Last: it leaves the former replica as the primary, with no replica.
  it('carries on against the promoted replica when the primary dies, and keeps what a replica had', async () => {
    const prefix = uniquePrefix();
    const store = await connect(prefix, { waitReplicas: { replicas: 1, timeoutMs: 1000 } });
    try {
      const before = await set.primaryPort();
      const kept: string[] = [];
      for (let i = 0; i < 50; i++) if (await store.setIfAbsent(k(`before-${i}`), 'v')) kept.push(`before-${i}`);
      const killedAt = Date.now();
      await set.servers.find((s) => s.port === before)?.kill();
      // Writes fail while no primary answers, then succeed against the promoted replica. With
      // wait_replicas, those writes and the reads use two connections, each back when it is back:
      // wait for both (a read on the one still reconnecting is refused at once, a 503 upstream).
      const succeeds = () =>
        Promise.all([store.setIfAbsent(k(`after-${Date.now()}`), 'v'), store.get(k('before-0'))]).then(
          () => true,
          () => false,
        );
      await poll('a write and a read to succeed after the failover', succeeds, { timeoutMs: 30_000, intervalMs: 100 });
      const recovered = Date.now();
      expect(await set.primaryPort()).not.toBe(before);
      console.log(`sentinel failover: writes resumed ${recovered - killedAt} ms after the primary was killed`);
      // Every write acknowledged after a replica had it is on the new primary.
      expect(await store.getMany(kept.map(k))).toEqual(kept.map(() => 'v'));
    } finally {
      await store.close();
    }
  });
});

describe('RedisStateStore through Sentinels that require a password', () => {
  it('presents state.sentinel_password to the Sentinels, and fails naming them (not the password) without it', async () => {
    const guarded = await startRedisSentinel({ sentinelAuth: true });
    try {
      const target = { sentinels: guarded.sentinels, sentinelName: guarded.name, password: guarded.password, prefix: uniquePrefix(), connectTimeoutMs: 1000 };
      const store = await RedisStateStore.connect({ ...target, sentinelPassword: guarded.sentinelPassword });
      try {
        expect(await store.setIfAbsent({ kind: 'sentinel', namespace: 'n', tenant: 't', id: 'guarded' }, 'v')).toBe(true);
      } finally {
        await store.close();
      }
      const refused = createStateStore({ backend: 'redis', ...target });
      await expect(refused).rejects.toThrow(/cannot connect to the Redis primary/);
      await expect(refused).rejects.not.toThrow(/sentinel-test-pw|sentinels-own-pw/);
    } finally {
      await guarded.stop();
    }
  }, 60_000);
});
