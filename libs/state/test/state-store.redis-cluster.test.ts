import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteKeys } from '../../../test/support/delete-keys.js';
import { redisErrorCounts } from '../../../test/support/redis-cluster.js';
import { testRedisClusterNodes, uniquePrefix } from '../../../test/support/redis-url.js';
import { bullPrefix } from '../src/bullmq/bullmq-naming.js';
import { BullMqScheduler } from '../src/bullmq/bullmq-scheduler.js';
import { renderKey } from '../src/keys.js';
import { stageBatch } from '../src/redis/log-ack-with.js';
import { RedisStateStore } from '../src/redis/redis-state-store.js';
import type { StateKey } from '../src/state-store.js';
import { CONTRACT_BACKOFF_MS, schedulerContract } from './contract/scheduler.contract.js';
import { stateStoreContract } from './contract/state-store.contract.js';
import { REDIS_CONTRACT_OPTIONS, redisContract } from './support/redis-contract.js';

/*
 * The StateStore and Scheduler contracts on a 3-primary Redis Cluster, and what only a cluster
 * has: batches spanning slots, SCAN over every primary, a staged acknowledgement finished by
 * another consumer. After everything, no node may have answered CROSSSLOT.
 */

const nodes = testRedisClusterNodes();
let admin: Cluster;

beforeAll(() => {
  admin = new Cluster(nodes.map((n) => ({ host: '127.0.0.1', port: Number(n.split(':')[1]) })));
});

afterAll(async () => {
  admin.disconnect();
  // Every multi-key command stayed within one slot (the run's other suites on the cluster too).
  expect((await redisErrorCounts(nodes)).CROSSSLOT ?? 0).toBe(0);
});

function connect(prefix: string): Promise<RedisStateStore> {
  return RedisStateStore.connect({ clusterNodes: nodes, prefix });
}

stateStoreContract('redis-cluster', redisContract(connect), REDIS_CONTRACT_OPTIONS);

schedulerContract('bullmq-cluster', async () => {
  const prefix = uniquePrefix();
  const scheduler = new BullMqScheduler({ clusterNodes: nodes, prefix, backoffBaseMs: CONTRACT_BACKOFF_MS });
  return {
    scheduler,
    async cleanup() {
      await scheduler.close();
      await deleteKeys(admin, `{${prefix}:*`);
    },
  };
});

describe('RedisStateStore on Redis Cluster', () => {
  const inTenant = (tenant: string, id: string, kind = 'spread'): StateKey => ({ kind, namespace: 'n', tenant, id });
  const tenants = Array.from({ length: 24 }, (_, i) => `t${i}`);

  it('writes and reads batches whose keys span slots and primaries', async () => {
    const prefix = uniquePrefix();
    const store = await connect(prefix);
    try {
      const log: StateKey = { kind: 'spread-log', namespace: '_', tenant: '_', id: 'log' };
      await store.writeBatch(
        tenants.flatMap((t) => [
          { op: 'set' as const, key: inTenant(t, 'v'), value: t },
          { op: 'increment' as const, key: inTenant(t, 'n', 'spread-count'), by: 2 },
          { op: 'indexAdd' as const, index: inTenant(t, 'i', 'spread-index'), member: t, score: 1 },
        ]),
        { append: { log, message: 'written' } },
      );
      expect(await store.getMany(tenants.map((t) => inTenant(t, 'v')))).toEqual(tenants);
      expect(await store.logRange(log, { limit: 10 })).toMatchObject([{ message: 'written' }]);
      // The keys really are spread: more than one primary holds some.
      const holders = new Set(await Promise.all(tenants.map((t) => admin.cluster('KEYSLOT', renderKey(prefix, inTenant(t, 'v'))))));
      expect(holders.size).toBeGreaterThan(1);
      await store.writeBatch(tenants.map((t) => ({ op: 'delete' as const, key: inTenant(t, 'v') })));
      expect(await store.getMany(tenants.map((t) => inTenant(t, 'v')))).toEqual(tenants.map(() => null));
    } finally {
      await store.close();
      await deleteKeys(admin, `${prefix}:*`);
    }
  });

  it('scans one kind across every primary, page by page', async () => {
    const prefix = uniquePrefix();
    const store = await connect(prefix);
    try {
      await store.writeBatch(tenants.map((t) => ({ op: 'set' as const, key: inTenant(t, 'v', 'scanned'), value: t })));
      const seen = new Set<string>();
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.scan('scanned', { count: 10, ...(cursor === undefined ? {} : { cursor }) });
        for (const e of page.entries) seen.add(e.value);
        cursor = page.cursor ?? undefined;
        pages++;
        // The run's other suites share the cluster: a page visits few keys of a busy keyspace.
      } while (cursor !== undefined && pages < 20_000);
      expect([...seen].sort()).toEqual([...tenants].sort());
      expect(pages).toBeGreaterThan(1);
    } finally {
      await store.close();
      await deleteKeys(admin, `${prefix}:*`);
    }
  });

  it('a batch acknowledged across slots by a consumer that died after staging it is finished once, by the next claim', async () => {
    const prefix = uniquePrefix();
    const store = await connect(prefix);
    try {
      const log: StateKey = { kind: 'ack-log', namespace: '_', tenant: '_', id: 'log' };
      await store.logGroupCreate(log, 'g', 'start');
      for (const t of tenants) await store.logAppend(log, t, 1000);
      const delivered = await store.logGroupRead(log, 'g', 'dead', 100);
      expect(delivered).toHaveLength(tenants.length);
      const counter = (t: string) => inTenant(t, 'count', 'ack-count');
      // What logGroupAckWith's first step does, and nothing after it: the consumer dies there.
      const render = (key: StateKey) => renderKey(prefix, key);
      const slots = tenants.map((t) => ({ keys: [render(counter(t))], args: ['i', '2', '', '1'] }));
      const ids = delivered.map((d) => d.id);
      expect(await stageBatch(store.client, render(log), 'g', 'dead', ids, 'batch-1', { at: Date.now() - 60_000, slots })).toBe(true);
      // Acknowledged with the staging: nothing is left pending, and the counters are not written yet.
      expect(await store.logGroupLag(log, 'g')).toEqual({ pending: 0, undelivered: 0 });
      expect(await store.getMany(tenants.map(counter))).toEqual(tenants.map(() => null));
      // Another consumer's claim finishes it; a second claim finds nothing more to do.
      await store.logGroupClaim(log, 'g', 'alive', 1000, 10);
      await store.logGroupClaim(log, 'g', 'alive', 1000, 10);
      expect(await store.getMany(tenants.map(counter))).toEqual(tenants.map(() => '1'));
      // A batch still within its consumer's time is left to it.
      const [fresh] = [await store.logAppend(log, 'late', 1000)];
      await store.logGroupRead(log, 'g', 'slow', 10);
      expect(await stageBatch(store.client, render(log), 'g', 'slow', [fresh], 'batch-2', { at: Date.now(), slots: slots.slice(0, 1) })).toBe(true);
      await store.logGroupClaim(log, 'g', 'alive', 60_000, 10);
      expect(await store.get(counter(tenants[0] as string))).toBe('1');
    } finally {
      await store.close();
      await deleteKeys(admin, `${prefix}:*`);
    }
  });

  it('logGroupAckWith applies writes across slots once, with the acknowledgement', async () => {
    const prefix = uniquePrefix();
    const store = await connect(prefix);
    try {
      const log: StateKey = { kind: 'ack-log', namespace: '_', tenant: '_', id: 'log' };
      await store.logGroupCreate(log, 'g', 'start');
      const id = await store.logAppend(log, 'm', 1000);
      await store.logGroupRead(log, 'g', 'c1', 10);
      const writes = tenants.map((t) => ({ op: 'increment' as const, key: inTenant(t, 'count', 'ack-count'), by: 3 }));
      expect(await store.logGroupAckWith(log, 'g', 'c1', [id], writes)).toEqual({ applied: true, failed: 0 });
      // Handed out twice: the second acknowledgement applies nothing.
      expect(await store.logGroupAckWith(log, 'g', 'c1', [id], writes)).toEqual({ applied: false, failed: 0 });
      expect(await store.getMany(writes.map((w) => w.key))).toEqual(tenants.map(() => '3'));
    } finally {
      await store.close();
      await deleteKeys(admin, `${prefix}:*`);
    }
  });

  it('puts each BullMQ queue in a slot of its own (one hash tag per queue)', () => {
    expect(bullPrefix('sluice', 'group-flush')).toBe('{sluice:group-flush}:bull');
    expect(bullPrefix('sluice')).toBe('{sluice}:bull');
  });
});
