import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedisStore, dropAndClose } from '../../../test/support/redis-topologies.js';
import { testRedisClusterNodes, uniquePrefix } from '../../../test/support/redis-url.js';
import { renderKey } from '@sluice/state';
import { INGEST_SHARDS, ingestLogKey } from '../src/keys.js';
import { StateAuditStore } from '../src/state-audit-store.js';
import { draft } from './support/records.js';

/*
 * On a Redis Cluster the ingest log is INGEST_SHARDS logs in as many scopes: a record's message
 * goes to the log its action id picks, the logs spread over the primaries, and a catch-up (or the
 * indexer loops) empties every one of them into the indexes.
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
      const logs = Array.from({ length: INGEST_SHARDS }, (_, s) => renderKey(prefix, ingestLogKey(s)));
      const lengths = await Promise.all(logs.map((log) => admin.xlen(log)));
      expect(lengths.reduce((a, b) => a + b, 0)).toBe(64);
      expect(lengths.filter((n) => n > 0).length).toBeGreaterThanOrEqual(INGEST_SHARDS / 2);
      // The unsharded log is not used.
      expect(await admin.exists(renderKey(prefix, ingestLogKey()))).toBe(0);
      const primaries = new Set(await Promise.all(logs.map(async (log) => (admin.slots[Number(await admin.cluster('KEYSLOT', log))] ?? [])[0])));
      expect(primaries.size).toBeGreaterThan(1);

      expect(await audit.catchUp()).toBe(true);
      expect(await Promise.all(logs.map((log) => admin.xlen(log)))).toEqual(logs.map(() => 0));
      const page = await audit.query({ limit: 100, offset: 0, namespace: 'ns' });
      expect(page.records).toHaveLength(64);
      expect(page.total).toBe(64);
    } finally {
      await audit.close();
      await dropAndClose(state, prefix);
    }
  });
});
