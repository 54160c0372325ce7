import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedisStore, dropAndClose } from '../../../test/support/redis-topologies.js';
import { testRedisClusterNodes, uniquePrefix } from '../../../test/support/redis-url.js';
import { renderKey } from '@sluice/state';
import { AUDIT_SHARDS, globalIndexKey, ingestLogKey } from '../src/keys.js';
import { StateAuditStore } from '../src/state-audit-store.js';
import { draft } from './support/records.js';

/*
 * On a Redis Cluster the trail's shared keys are AUDIT_SHARDS shards in as many scopes: a
 * record's message goes to the log its action id picks, its global index entries to the shard its
 * record id picks; the shards sit evenly on the primaries; a catch-up (or the indexer loops)
 * empties every log into the indexes, and a query across tenants reads every shard as one index.
 */
describe('the audit ingest on a Redis Cluster', () => {
  let admin: Cluster;
  beforeAll(() => {
    admin = new Cluster(testRedisClusterNodes().map((n) => ({ host: '127.0.0.1', port: Number(n.split(':')[1]) })));
  });
  afterAll(() => admin.disconnect());

  it('spreads the messages over its logs and their primaries, and indexes them all', async () => {
    const prefix = uniquePrefix();
    const state = await connectRedisStore('redis-cluster', prefix);
    const audit = new StateAuditStore(state, {});
    try {
      expect(state.sharded).toBe(true);
      for (let i = 0; i < 64; i++) await audit.append(draft({ action_id: `act-${i}`, tenant: `t${i % 4}` }), { ttlMs: null, chain: false });
      const logs = Array.from({ length: AUDIT_SHARDS }, (_, s) => renderKey(prefix, ingestLogKey(s)));
      const lengths = await Promise.all(logs.map((log) => admin.xlen(log)));
      expect(lengths.reduce((a, b) => a + b, 0)).toBe(64);
      expect(lengths.filter((n) => n > 0).length).toBeGreaterThanOrEqual(AUDIT_SHARDS / 2);
      // The unsharded log is not used.
      expect(await admin.exists(renderKey(prefix, ingestLogKey()))).toBe(0);
      // The test Cluster's 3 primaries hold equal runs of slots: 4 shards each.
      const primaries = await Promise.all(logs.map(async (log) => (admin.slots[Number(await admin.cluster('KEYSLOT', log))] ?? [])[0]));
      const perPrimary = new Map<string | undefined, number>();
      for (const p of primaries) perPrimary.set(p, (perPrimary.get(p) ?? 0) + 1);
      expect([...perPrimary.values()]).toEqual([4, 4, 4]);

      expect(await audit.catchUp()).toBe(true);
      expect(await Promise.all(logs.map((log) => admin.xlen(log)))).toEqual(logs.map(() => 0));
      const page = await audit.query({ limit: 100, offset: 0, namespace: 'ns' });
      expect(page.records).toHaveLength(64);
      expect(page.total).toBe(64);
      // The global index entries, in their shards (the unsharded index unused).
      const entries = await Promise.all(Array.from({ length: AUDIT_SHARDS }, (_, s) => admin.zcard(renderKey(prefix, globalIndexKey(undefined, s)))));
      expect(entries.reduce((a, b) => a + b, 0)).toBe(64);
      expect(entries.filter((n) => n > 0).length).toBeGreaterThanOrEqual(AUDIT_SHARDS / 2);
      expect(await admin.exists(renderKey(prefix, globalIndexKey()))).toBe(0);
    } finally {
      await audit.close();
      await dropAndClose(state, prefix);
    }
  });
});
