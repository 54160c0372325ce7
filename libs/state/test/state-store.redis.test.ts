import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteKeys } from '../../../test/support/delete-keys.js';
import { testRedisUrl, uniquePrefix } from '../../../test/support/redis-url.js';
import { createStateStore } from '../src/create-state-store.js';
import { renderKey } from '../src/keys.js';
import { RedisStateStore } from '../src/redis/redis-state-store.js';
import { stateStoreContract } from './contract/state-store.contract.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));


let admin: Redis;
beforeAll(() => {
  admin = new Redis(testRedisUrl(), { maxRetriesPerRequest: 2 });
});
afterAll(async () => {
  await admin.quit();
});

stateStoreContract(
  'redis',
  async () => {
    const prefix = uniquePrefix();
    const store = await RedisStateStore.connect({ url: testRedisUrl(), prefix });
    return {
      store,
      advance: (ms) => sleep(ms),
      now: () => Date.now(),
      cleanup: async () => {
        await store.close();
        await deleteKeys(admin, `${prefix}:*`);
      },
    };
  },
  // Real sleeps: TTLs of 150-600 ms; resetAtMs comes from server time on this host.
  { unitMs: 150, toleranceMs: 60 },
);

// Redis-only assertions: storage layout, TTL handling in the scripts, connection failures.
describe('RedisStateStore on Redis', () => {
  const k = (id: string) => ({ kind: 'layout', namespace: 'n', tenant: 't', id });

  it('stores versioned values as a hash {v, d} and windows with a PTTL set once', async () => {
    const prefix = uniquePrefix();
    const store = await RedisStateStore.connect({ url: testRedisUrl(), prefix });
    try {
      await store.compareAndSwap(k('ver'), 0, 'data');
      expect(await admin.hgetall(renderKey(prefix, k('ver')))).toEqual({ v: '1', d: 'data' });
      await store.incrementWindow(k('win'), { windowMs: 60_000, limit: 1 });
      await admin.pexpire(renderKey(prefix, k('win')), 30_000);
      await store.incrementWindow(k('win'), { windowMs: 60_000, limit: 1 }); // refused
      await store.incrementWindow(k('win'), { windowMs: 60_000, limit: 5 }); // allowed, existing window
      expect(await admin.pttl(renderKey(prefix, k('win')))).toBeLessThanOrEqual(30_000);
      expect(await admin.get(renderKey(prefix, k('win')))).toBe('2');
    } finally {
      await store.close();
      await deleteKeys(admin, `${prefix}:*`);
    }
  });

  it('writes WriteOp TTLs with PEXPIRE NX and compareAndSwapWith as the {v, d} hash', async () => {
    const prefix = uniquePrefix();
    const store = await RedisStateStore.connect({ url: testRedisUrl(), prefix });
    try {
      await store.writeBatch([{ op: 'increment', key: k('n'), by: 1, ttlMs: 60_000 }]);
      await admin.pexpire(renderKey(prefix, k('n')), 30_000);
      await store.writeBatch([{ op: 'increment', key: k('n'), by: 1, ttlMs: 60_000 }]);
      expect(await admin.pttl(renderKey(prefix, k('n')))).toBeLessThanOrEqual(30_000);
      expect(await admin.get(renderKey(prefix, k('n')))).toBe('2');
      const result = await store.compareAndSwapWith(k('doc'), 0, 'data', [{ op: 'indexAdd', index: k('idx'), member: 'm', score: 5, ttlMs: 60_000 }]);
      expect(result).toEqual({ ok: true, version: 1 });
      expect(await admin.hgetall(renderKey(prefix, k('doc')))).toEqual({ v: '1', d: 'data' });
      expect(await admin.pttl(renderKey(prefix, k('doc')))).toBe(-1);
      expect(await admin.type(renderKey(prefix, k('idx')))).toBe('zset');
      expect(await admin.pttl(renderKey(prefix, k('idx')))).toBeGreaterThan(50_000);
    } finally {
      await store.close();
      await deleteKeys(admin, `${prefix}:*`);
    }
  });

  it('uses the prefix for pub/sub channels, so stores with other prefixes do not hear each other', async () => {
    const a = await RedisStateStore.connect({ url: testRedisUrl(), prefix: uniquePrefix() });
    const b = await RedisStateStore.connect({ url: testRedisUrl(), prefix: uniquePrefix() });
    try {
      const heard: string[] = [];
      await b.subscribe('c', (m) => heard.push(`b:${m}`));
      await a.subscribe('c', (m) => heard.push(`a:${m}`));
      await a.publish('c', 'x');
      await b.publish('c', 'y');
      for (let i = 0; i < 200 && heard.length < 2; i++) await sleep(5);
      expect(heard.sort()).toEqual(['a:x', 'b:y']);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('createStateStore fails with an error naming the URL when Redis is unreachable', async () => {
    const url = 'redis://:secret@127.0.0.1:1';
    await expect(createStateStore({ backend: 'redis', url, prefix: 'x', connectTimeoutMs: 300 })).rejects.toThrow(
      /cannot connect to Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1/,
    );
  });

  it('ping answers false quickly, without throwing, when Redis is unreachable', async () => {
    const store = new RedisStateStore({ url: 'redis://127.0.0.1:1', prefix: 'x', pingTimeoutMs: 200 });
    const start = Date.now();
    expect(await store.ping()).toBe(false);
    expect(Date.now() - start).toBeLessThan(2000);
    await store.close();
  });
});
