import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster } from '../../../test/support/redis-cluster.js';
import { startRedisServer } from '../../../test/support/redis-server.js';
import { RedisStateStore } from '../src/redis/redis-state-store.js';

/** A private Redis (one server, or a Cluster's primaries) and what its clients made it read. */
interface PrivateRedis {
  store: RedisStateStore;
  /** Reads Redis made from its clients' sockets, over every server (INFO's own command is one per server). */
  readsProcessed(): Promise<number>;
  /** INFO commands readsProcessed sends: one per server. */
  servers: number;
  stop(): Promise<void>;
}

async function single(): Promise<PrivateRedis> {
  const redis = await startRedisServer();
  const store = await RedisStateStore.connect({ url: redis.url, prefix: 'coalesce' });
  const admins = [new Redis(redis.url)];
  return { store, servers: 1, readsProcessed: () => readsOf(admins), stop: () => stopAll(store, admins, () => redis.stop()) };
}

async function cluster(): Promise<PrivateRedis> {
  const set = await startRedisCluster({ primaries: 3 });
  const store = await RedisStateStore.connect({ clusterNodes: set.nodes, prefix: 'coalesce' });
  const admins = set.nodes.map((node) => new Redis(`redis://${node}`));
  return { store, servers: admins.length, readsProcessed: () => readsOf(admins), stop: () => stopAll(store, admins, () => set.stop()) };
}

async function readsOf(admins: readonly Redis[]): Promise<number> {
  const infos = await Promise.all(admins.map((admin) => admin.info('stats')));
  return infos.reduce((sum, info) => sum + Number(/total_reads_processed:(\d+)/.exec(info)?.[1]), 0);
}

async function stopAll(store: RedisStateStore, admins: readonly Redis[], stopServers: () => Promise<void>): Promise<void> {
  await store.close();
  for (const admin of admins) admin.disconnect();
  await stopServers();
}

/*
 * Private servers: INFO counts the reads of every client, so no other test file may share them.
 * The store's commands of one turn of the event loop leave in one write per connection (corked
 * until the check phase), so Redis reads them at once; sent one write each, Redis wakes for most
 * of them (148 reads of 200 commands, measured without the coalescing).
 */
describe.each([
  ['one Redis', single],
  ['a Redis Cluster', cluster],
] as const)('a state store on %s coalesces the writes of one turn of the event loop', (_name, start) => {
  let redis: PrivateRedis;
  beforeAll(async () => {
    redis = await start();
  }, 60_000);
  afterAll(() => redis?.stop());

  // One tenant: one hash slot, one connection on a Cluster.
  const key = (id: string) => ({ kind: 'coalesce', namespace: 'ns', tenant: 't', id });

  it('sends 200 commands of one turn, single calls and pipelines alike, in at most a few reads', async () => {
    const { store } = redis;
    await store.get(key('warm'));
    const before = await redis.readsProcessed();
    const writes = Array.from({ length: 100 }, (_, i) =>
      store.writeBatch([
        { op: 'increment', key: key('n'), by: 1 },
        { op: 'indexAdd', index: key('ix'), member: `m${i}`, score: i },
      ]),
    );
    const singles = Array.from({ length: 100 }, (_, i) => store.set(key(`s${i}`), String(i)));
    await Promise.all([...writes, ...singles]);
    const reads = (await redis.readsProcessed()) - before - redis.servers;
    expect(reads).toBeGreaterThanOrEqual(1);
    // 200 commands of ~60 bytes: one writev; Redis may split a large one over a few reads.
    expect(reads).toBeLessThanOrEqual(4);
    expect(await store.get(key('n'))).toBe('100');
    expect(await store.indexCount(key('ix'))).toBe(100);
  });

  it('keeps the order in which the commands were issued', async () => {
    const { store } = redis;
    const k = key('ordered');
    const [, , read] = await Promise.all([store.set(k, 'a'), store.writeBatch([{ op: 'set', key: k, value: 'b' }]), store.get(k), store.set(k, 'c')]);
    expect(read).toBe('b');
    expect(await store.get(k)).toBe('c');
  });

  it('sends the commands of later turns, each turn on its own', async () => {
    const { store } = redis;
    for (let turn = 0; turn < 5; turn++) {
      await store.set(key(`turn${turn}`), String(turn));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await Promise.all([0, 1, 2, 3, 4].map((t) => store.get(key(`turn${t}`))))).toEqual(['0', '1', '2', '3', '4']);
  });
});
