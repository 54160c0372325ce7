import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deleteKeys } from '../../../test/support/delete-keys.js';
import { poll } from '../../../test/support/poll.js';
import { testRedisUrl, uniquePrefix } from '../../../test/support/redis-url.js';
import { createStateStore } from '../src/create-state-store.js';
import { renderKey } from '../src/keys.js';
import { RedisStateStore } from '../src/redis/redis-state-store.js';
import { stateStoreContract } from './contract/state-store.contract.js';
import { REDIS_CONTRACT_OPTIONS, redisContract } from './support/redis-contract.js';

/**
 * Commands that touch keys under `prefix`, seen through MONITOR (which also shows commands run by
 * scripts). Filtering by prefix keeps other test files sharing the server out of the count. A raw
 * socket, not ioredis's monitor(): on a busy server the first monitor line can arrive in the same
 * read as MONITOR's +OK, before ioredis has switched to monitoring, and it then throws.
 */
async function watchCommands(prefix: string): Promise<{ commands: string[]; settled: () => Promise<void>; stop: () => void }> {
  const { hostname, port } = new URL(testRedisUrl());
  const socket = connect({ host: hostname, port: Number(port) }).setEncoding('utf8');
  const barrierKey = `${prefix}:monitor-barrier`;
  const commands: string[] = [];
  let onBarrier = () => {};
  let buffered = '';
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      for (let end = buffered.indexOf('\r\n'); end >= 0; end = buffered.indexOf('\r\n')) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (line === '+OK') resolve();
        else if (line.includes(barrierKey)) onBarrier();
        // +<time> [<db> <client>] "<command>" "<arg>" ...: the first quoted token is the command.
        else if (line.includes(prefix)) commands.push((/"([^"]*)"/.exec(line)?.[1] ?? '').toLowerCase());
      }
    });
    socket.write('MONITOR\r\n');
  });
  return {
    commands,
    // MONITOR output trails the commands: a command sent after them, once seen, means they all are.
    settled: async () => {
      const seen = new Promise<void>((resolve) => (onBarrier = resolve));
      await admin.exists(barrierKey);
      await seen;
    },
    stop: () => socket.destroy(),
  };
}

let admin: Redis;
beforeAll(() => {
  admin = new Redis(testRedisUrl(), { maxRetriesPerRequest: 2 });
});
afterAll(async () => {
  await admin.quit();
});

stateStoreContract(
  'redis',
  redisContract((prefix) => RedisStateStore.connect({ url: testRedisUrl(), prefix })),
  REDIS_CONTRACT_OPTIONS,
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
      await poll('both messages', () => heard.length >= 2);
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

describe('RedisStateStore log acknowledgements with writes', () => {
  const k = (id: string) => ({ kind: 'ack-with-test', namespace: 'n', tenant: 't', id });
  const stores: RedisStateStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  it('forgets the consumers idle long enough that hold nothing (dead processes), keeping busy and recent ones', async () => {
    const prefix = uniquePrefix();
    const store = await RedisStateStore.connect({ url: testRedisUrl(), prefix });
    stores.push(store);
    const admin = new Redis(testRedisUrl());
    try {
      const log = k('consumers');
      await store.logGroupCreate(log, 'g', 'start');
      for (const m of ['a', 'b', 'c']) await store.writeBatch([], { append: { log, message: m } });
      const [a] = await store.logGroupRead(log, 'g', 'dead', 1);
      await store.logGroupAckWith(log, 'g', 'dead', [a?.id ?? ''], []);
      await store.logGroupRead(log, 'g', 'holding', 1);
      const names = async () => ((await admin.xinfo('CONSUMERS', renderKey(prefix, log), 'g')) as string[][]).map((c) => c[1]).sort();
      expect(await names()).toEqual(['dead', 'holding']);
      expect(await store.logGroupForgetIdle(log, 'g', 60_000)).toBe(0);
      await sleep(20);
      expect(await store.logGroupForgetIdle(log, 'g', 10)).toBe(1);
      expect(await names()).toEqual(['holding']);
      // A forgotten consumer that was alive after all is created again by its next read.
      expect((await store.logGroupRead(log, 'g', 'dead', 1)).map((m) => m.message)).toEqual(['c']);
      expect(await names()).toEqual(['dead', 'holding']);
      // A pile goes 1,000 a call, so that one script does not hold Redis long.
      const pile = admin.pipeline();
      for (let i = 0; i < 1005; i++) pile.xgroup('CREATECONSUMER', renderKey(prefix, log), 'g', `pod-${i}`);
      await pile.exec();
      await sleep(20);
      expect(await store.logGroupForgetIdle(log, 'g', 10)).toBe(1000);
      expect(await store.logGroupForgetIdle(log, 'g', 10)).toBe(5);
    } finally {
      await admin.quit();
    }
  });

  it('sends a write batch and its log message as one pipeline, and applies a batch of many messages with one command per key', async () => {
    const prefix = uniquePrefix();
    const store = await RedisStateStore.connect({ url: testRedisUrl(), prefix });
    stores.push(store);
    const log = k('log');
    await store.logGroupCreate(log, 'g', 'start');
    const monitor = await watchCommands(prefix);
    try {
      await store.writeBatch([{ op: 'set', key: k('v'), value: 'x' }], { append: { log, message: 'm' } });
      await monitor.settled();
      expect(monitor.commands).toEqual(['set', 'xadd']);
      monitor.commands.length = 0;
      // Consecutive additions to one key (one TTL) are one ZADD; consecutive removals one ZREM.
      await store.writeBatch([
        { op: 'indexAdd', index: k('grouped'), member: 'a', score: 1, ttlMs: 60_000 },
        { op: 'indexAdd', index: k('grouped'), member: 'b', score: 2, ttlMs: 60_000 },
        { op: 'indexAdd', index: k('other'), member: 'c', score: 3 },
        { op: 'indexRemove', index: k('grouped'), member: 'a' },
        { op: 'indexRemove', index: k('grouped'), member: 'x' },
      ]);
      await monitor.settled();
      expect(monitor.commands).toEqual(['zadd', 'pexpire', 'zadd', 'zrem']);
      expect(await store.indexRange(k('grouped'), { limit: 10 })).toEqual([{ member: 'b', score: 2 }]);
      await monitor.settled();
      monitor.commands.length = 0;
      // Consecutive deletes, of any keys, are one DEL.
      await store.writeBatch([
        { op: 'set', key: k('d1'), value: '1' },
        { op: 'set', key: k('d2'), value: '2' },
      ]);
      await store.writeBatch([
        { op: 'delete', key: k('d1') },
        { op: 'delete', key: k('d2') },
        { op: 'delete', key: k('grouped') },
        { op: 'indexRemove', index: k('other'), member: 'c' },
      ]);
      await monitor.settled();
      expect(monitor.commands).toEqual(['set', 'set', 'del', 'zrem']);
      expect(await store.getMany([k('d1'), k('d2')])).toEqual([null, null]);
      expect(await store.indexCount(k('grouped'))).toBe(0);
      monitor.commands.length = 0;
      for (let i = 1; i < 120; i++) await store.writeBatch([], { append: { log, message: `m${i}` } });
      const ids = (await store.logGroupRead(log, 'g', 'c', 200)).map((m) => m.id);
      // MONITOR trails: wait for the appends and the read to show before counting afresh.
      await monitor.settled();
      monitor.commands.length = 0;
      const writes = ids.flatMap(
        (id, i) =>
          [
            { op: 'increment', key: k('n'), by: 1, ttlMs: 60_000 },
            { op: 'indexAdd', index: k('i'), member: `m${i % 100}`, score: i },
            { op: 'indexAdd', index: k(`per-${i % 2}`), member: id, score: i },
          ] as const,
      );
      expect(await store.logGroupAckWith(log, 'g', 'c', ids, writes)).toEqual({ applied: true, failed: 0 });
      await monitor.settled();
      const applied = monitor.commands.filter((c) => c !== 'evalsha' && c !== 'eval');
      expect(await store.get(k('n'))).toBe('120');
      expect(await store.indexCount(k('i'))).toBe(100);
      expect(await admin.pttl(renderKey(prefix, k('n')))).toBeGreaterThan(50_000);
      // One script: the pending check (one range read), then one command per key, then the acknowledgement and deletion.
      expect(applied.sort()).toEqual(['incrby', 'pexpire', 'xack', 'xdel', 'xpending', 'zadd', 'zadd', 'zadd'].sort());
      expect(await store.logLength(log)).toBe(0);
    } finally {
      monitor.stop();
      await deleteKeys(admin, `${prefix}:*`);
    }
  });
});
