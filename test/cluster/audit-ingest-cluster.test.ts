import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditTrailConfig, type AuditTrailConfig } from '../support/audit-trails.js';
import { sampleAction } from '../support/start-gateway.js';
import { Cluster } from './harness.js';

const DISPATCHES = 1000;
const CONCURRENCY = 20;

/**
 * The audit trail's guarantees across replicas now that records are indexed off the request
 * path: a record answers `GET /v1/audit/{id}` on any replica as soon as its dispatch has
 * answered, and a list query (and analytics) on any replica sees every answered dispatch —
 * with the trail in Redis, and in PostgreSQL (moved there by the worker, out of Redis).
 */
describe.each(['state', 'postgres'] as const)('cluster: audit records indexed in bulk, visible at once (audit.backend %s)', (backend) => {
  let cluster: Cluster;
  let trail: AuditTrailConfig;
  beforeAll(async () => {
    trail = await auditTrailConfig({ state: 'redis', postgres: backend === 'postgres' });
    cluster = await Cluster.start({ apis: 2, workers: 1, config: { audit: trail.audit } });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    await trail?.stop();
  });

  it('finds each record on the other replica right after its dispatch answers, and lists all 1,000 at once', async () => {
    const [first, second] = cluster.apis;
    if (!first || !second) throw new Error('need two replicas');
    const missing: string[] = [];
    let next = 0;
    const lane = async (lane: number) => {
      while (next < DISPATCHES) {
        const id = `ryw-${next++}`;
        const [writer, reader] = lane % 2 === 0 ? [first, second] : [second, first];
        const res = await fetch(`${writer.url}/v1/dispatch`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(sampleAction({ id, tenant: 'ryw' })),
        });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
        const read = await fetch(`${reader.url}/v1/audit/${id}`);
        if (read.status !== 200) missing.push(id);
        await read.arrayBuffer();
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => lane(i)));
    expect(missing).toEqual([]);

    // No waiting: the first list query after the last answer counts them all, on either replica.
    for (const api of [first, second]) {
      const page = (await (await fetch(`${api.url}/v1/audit?namespace=payments&tenant=ryw&limit=1`)).json()) as { total?: number };
      expect(page.total).toBe(DISPATCHES);
    }
    const volume = (await (await fetch(`${second.url}/v1/analytics?metric=volume&namespace=payments&tenant=ryw`)).json()) as { total_count: number };
    expect(volume.total_count).toBe(DISPATCHES);
    if (trail.rowsOf !== null) {
      // One row per dispatch in the table, and no record left behind in Redis.
      expect(await trail.rowsOf('ryw')).toEqual({ rows: DISPATCHES, actionIds: DISPATCHES });
      const redis = new Redis(cluster.redis.url);
      const left = await redis.keys('sluice-cluster:audit:*');
      redis.disconnect();
      expect(left).toEqual([]);
    }
  }, 120_000);
});
