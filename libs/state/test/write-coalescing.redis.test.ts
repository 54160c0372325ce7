import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RunningRedis } from '../../../test/support/redis-server.js';
import { RedisStateStore } from '../src/redis/redis-state-store.js';

/*
 * A private redis-server: its INFO counts the reads of every client, so no other test file may
 * share it. The store's commands of one turn of the event loop leave in one write (corked until
 * the check phase), so Redis reads them at once; sent one write each, Redis wakes for most of them.
 */
describe('a Redis state store coalesces the writes of one turn of the event loop', () => {
  let redis: RunningRedis;
  let store: RedisStateStore;
  let admin: Redis;

  beforeAll(async () => {
    redis = await startRedisServer();
    store = await RedisStateStore.connect({ url: redis.url, prefix: 'coalesce' });
    admin = new Redis(redis.url);
  }, 30_000);
  afterAll(async () => {
    await store?.close();
    admin?.disconnect();
    await redis?.stop();
  });

  /** Reads Redis made from its clients' sockets (INFO's own command is one of them). */
  const readsProcessed = async () => Number(/total_reads_processed:(\d+)/.exec(await admin.info('stats'))?.[1]);
  const key = (id: string) => ({ kind: 'coalesce', namespace: 'ns', tenant: 't', id });

  it('sends 200 commands of one turn, single calls and pipelines alike, in at most a few reads', async () => {
    await store.get(key('warm'));
    const before = await readsProcessed();
    const writes = Array.from({ length: 100 }, (_, i) =>
      store.writeBatch([
        { op: 'increment', key: key('n'), by: 1 },
        { op: 'indexAdd', index: key('ix'), member: `m${i}`, score: i },
      ]),
    );
    const singles = Array.from({ length: 100 }, (_, i) => store.set(key(`s${i}`), String(i)));
    await Promise.all([...writes, ...singles]);
    const reads = (await readsProcessed()) - before - 1;
    expect(reads).toBeGreaterThanOrEqual(1);
    // 200 commands of ~60 bytes: one writev; Redis may split a large one over a few reads.
    expect(reads).toBeLessThanOrEqual(4);
    expect(await store.get(key('n'))).toBe('100');
    expect(await store.indexCount(key('ix'))).toBe(100);
  });

  it('keeps the order in which the commands were issued', async () => {
    const k = key('ordered');
    const [, , first] = await Promise.all([store.set(k, 'a'), store.writeBatch([{ op: 'set', key: k, value: 'b' }]), store.get(k), store.set(k, 'c')]);
    expect(first).toBe('b');
    expect(await store.get(k)).toBe('c');
  });

  it('still sends the commands of later turns, and each turn on its own', async () => {
    for (let turn = 0; turn < 5; turn++) {
      await store.set(key(`turn${turn}`), String(turn));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await Promise.all([0, 1, 2, 3, 4].map((t) => store.get(key(`turn${t}`))))).toEqual(['0', '1', '2', '3', '4']);
  });
});
