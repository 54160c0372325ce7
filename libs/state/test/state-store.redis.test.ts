import { connect } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { deleteKeys } from '../../../test/support/delete-keys.js';
import { poll } from '../../../test/support/poll.js';
import { testRedisUrl, uniquePrefix } from '../../../test/support/redis-url.js';
import { createStateStore } from '../src/create-state-store.js';
import { renderKey } from '../src/keys.js';
import { deferredEntry } from '../src/redis/deferred-writes.js';
import { RedisStateStore } from '../src/redis/redis-state-store.js';
import { stateStoreContract } from './contract/state-store.contract.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

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

describe('RedisStateStore deferred writes', () => {
  const k = (id: string) => ({ kind: 'deferred-test', namespace: 'n', tenant: 't', id });
  const queueOf = (prefix: string) => `${prefix}:deferred:{_:_}:queue`;
  const stores: RedisStateStore[] = [];
  const open = async (prefix: string, deferred: ConstructorParameters<typeof RedisStateStore>[0]['deferred']) => {
    const store = await RedisStateStore.connect({ url: testRedisUrl(), prefix, deferred });
    stores.push(store);
    return store;
  };
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  it('queues a batch as one list entry in its pipeline and writes the keys only when applied', async () => {
    const prefix = uniquePrefix();
    const store = await open(prefix, { delayMs: 60_000, sweepMs: 60_000 });
    const monitor = await watchCommands(prefix);
    try {
      await store.writeBatch([{ op: 'set', key: k('v'), value: 'x' }], {
        deferred: [
          { op: 'increment', key: k('n'), by: 1, ttlMs: 60_000 },
          { op: 'indexAdd', index: k('i'), member: 'm', score: 1, ttlMs: 60_000 },
        ],
      });
      await monitor.settled();
      expect(monitor.commands).toEqual(['set', 'rpush']);
      expect(await admin.llen(queueOf(prefix))).toBe(1);
      expect(await admin.exists(renderKey(prefix, k('n')), renderKey(prefix, k('i')))).toBe(0);
      await store.applyDeferred();
      expect(await admin.llen(queueOf(prefix))).toBe(0);
      expect(await admin.get(renderKey(prefix, k('n')))).toBe('1');
      expect(await admin.pttl(renderKey(prefix, k('i')))).toBeGreaterThan(50_000);
    } finally {
      monitor.stop();
      await deleteKeys(admin, `${prefix}:*`);
    }
  });

  it('applies its own queue shortly after writing, without a reader', async () => {
    const prefix = uniquePrefix();
    const store = await open(prefix, { delayMs: 10, sweepMs: 60_000 });
    try {
      await store.writeBatch([], { deferred: [{ op: 'increment', key: k('n'), by: 5 }] });
      await vi.waitFor(async () => expect(await admin.get(renderKey(prefix, k('n')))).toBe('5'), { timeout: 2000, interval: 20 });
    } finally {
      await deleteKeys(admin, `${prefix}:*`);
    }
  });

  it('applies what it queued when closed', async () => {
    const prefix = uniquePrefix();
    const store = await open(prefix, { delayMs: 60_000, sweepMs: 60_000 });
    try {
      await store.writeBatch([], { deferred: [{ op: 'increment', key: k('n'), by: 3 }] });
      await store.close();
      expect(await admin.get(renderKey(prefix, k('n')))).toBe('3');
    } finally {
      await deleteKeys(admin, `${prefix}:*`);
    }
  });

  it('sweeps entries a dead process left queued', async () => {
    const prefix = uniquePrefix();
    const survivor = await open(prefix, { delayMs: 60_000, sweepMs: 50 });
    try {
      // What a process that died right after its pipeline leaves behind.
      await admin.rpush(
        queueOf(prefix),
        deferredEntry([{ op: 'increment', key: k('n'), by: 7 }], (key) => renderKey(prefix, key)),
      );
      await vi.waitFor(async () => expect(await admin.get(renderKey(prefix, k('n')))).toBe('7'), { timeout: 2000, interval: 20 });
      expect(await survivor.get(k('n'))).toBe('7');
    } finally {
      await deleteKeys(admin, `${prefix}:*`);
    }
  });

  it('a write to a key of the wrong type fails alone and is reported', async () => {
    const prefix = uniquePrefix();
    const errors: unknown[] = [];
    const store = await open(prefix, { delayMs: 60_000, sweepMs: 60_000, onError: (err) => errors.push(err) });
    try {
      await store.set(k('text'), 'not a number');
      await store.writeBatch([], {
        deferred: [
          { op: 'increment', key: k('text'), by: 1 },
          { op: 'indexAdd', index: k('text'), member: 'm', score: 1 },
          { op: 'increment', key: k('n'), by: 1 },
        ],
      });
      await store.applyDeferred();
      expect(await store.getMany([k('text'), k('n')])).toEqual(['not a number', '1']);
      expect(errors).toHaveLength(1);
      expect(String(errors[0])).toMatch(/2 deferred writes failed/);
    } finally {
      await deleteKeys(admin, `${prefix}:*`);
    }
  });

  it('reports each script call: entries applied, entries left in the shared queue, writes failed', async () => {
    const prefix = uniquePrefix();
    const results: unknown[] = [];
    const store = await open(prefix, { delayMs: 60_000, sweepMs: 60_000, batchSize: 2, onError: () => {}, onApplied: (r) => results.push(r) });
    try {
      await store.set(k('text'), 'not a number');
      for (const by of [1, 2, 3]) await store.writeBatch([], { deferred: [{ op: 'increment', key: k(by === 2 ? 'text' : 'n'), by }] });
      await store.applyDeferred();
      expect(results).toEqual([
        { popped: 2, left: 1, failed: 1 },
        { popped: 1, left: 0, failed: 0 },
      ]);
      expect(await store.get(k('n'))).toBe('4');
    } finally {
      await deleteKeys(admin, `${prefix}:*`);
    }
  });

  it('applies large queues in script calls of batchSize entries, grouping each key into one command', async () => {
    const prefix = uniquePrefix();
    const store = await open(prefix, { delayMs: 60_000, sweepMs: 60_000, batchSize: 50 });
    try {
      await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          store.writeBatch([], {
            deferred: [
              { op: 'increment', key: k('n'), by: 1 },
              { op: 'indexAdd', index: k('i'), member: `m${i % 100}`, score: i },
            ],
          }),
        ),
      );
      const monitor = await watchCommands(prefix);
      try {
        await store.applyDeferred();
        await monitor.settled();
      } finally {
        monitor.stop();
      }
      expect(await store.get(k('n'))).toBe('120');
      // m0..m19 were added twice: the later score won.
      expect(await store.indexRange(k('i'), { min: 0, max: 0, limit: 5 })).toEqual([]);
      expect(await store.indexCount(k('i'))).toBe(100);
      // 3 script calls (50 + 50 + 20), each one ZADD and one INCRBY.
      const count = (cmd: string) => monitor.commands.filter((c) => c === cmd).length;
      expect(count('zadd')).toBe(3);
      expect(count('incrby')).toBe(3);
    } finally {
      await deleteKeys(admin, `${prefix}:*`);
    }
  });
});
