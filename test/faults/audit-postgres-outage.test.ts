import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster } from '../cluster/harness.js';
import { poll } from '../support/poll.js';
import { prometheusSample } from '../support/prometheus-text.js';
import { postgresTrailConfig, type PostgresTrailConfig } from '../support/audit-trails.js';
import { dispatchLoad } from '../support/dispatch-load.js';

const INGEST_LOG = 'sluice-cluster:audit-ingest:{_:_}:log';
const TOTAL = 3000;
const CONCURRENCY = 24;

/**
 * PostgreSQL goes down under load and comes back: dispatches keep answering (the request path
 * writes Redis only), the ingest log holds the records meanwhile, and once the database is back
 * the backlog drains into it — one row per acknowledged dispatch, nothing left in Redis.
 */
describe('faults: the audit database restarted under load', () => {
  let cluster: Cluster;
  let trail: PostgresTrailConfig;
  let redis: Redis;
  beforeAll(async () => {
    trail = await postgresTrailConfig();
    cluster = await Cluster.start({ apis: 2, workers: 1, config: { audit: { ...trail.audit, index_claim_after_seconds: 1 } } });
    redis = new Redis(cluster.redis.url);
  }, 60_000);
  afterAll(async () => {
    redis?.disconnect();
    await cluster?.stop();
    await trail?.stop();
  });

  it('answers every dispatch while the database is away, and stores each once when it is back', async () => {
    const load = dispatchLoad(() => cluster.nextApi().url, { total: TOTAL, concurrency: CONCURRENCY, prefix: 'pg-out', tenant: 'outage' });
    await poll('a third of the load sent', () => load.sent() >= TOTAL / 3, { timeoutMs: 30_000, intervalMs: 10 });
    await trail.server.down();
    const backlogWhileDown = await poll(
      'records to wait in the ingest log while the database is away',
      () => redis.xlen(INGEST_LOG),
      (n) => n > 100,
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    // The worker's backlog gauge follows while nothing gets through.
    const worker = cluster.workers[0];
    if (!worker) throw new Error('no worker');
    await poll(
      "the worker's backlog gauge to show the waiting records",
      async () => prometheusSample(await (await fetch(`${worker.url}/metrics`)).text(), 'sluice_audit_ingest_backlog') ?? 0,
      (n) => n > 100,
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    await sleep(500);
    await trail.server.up();
    const { answered, failed } = await load.done;
    expect(failed).toEqual([]);
    expect(answered.size).toBe(TOTAL);
    expect(backlogWhileDown).toBeGreaterThan(100);

    await poll(
      'the ingest log to drain into the database',
      () => redis.xlen(INGEST_LOG),
      (n) => n === 0,
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(await trail.rowsOf('outage')).toEqual({ rows: TOTAL, actionIds: TOTAL });
    expect(await redis.keys('sluice-cluster:audit:*')).toEqual([]);
    const page = (await (await fetch(`${cluster.nextApi().url}/v1/audit?namespace=payments&tenant=outage&limit=1`)).json()) as { total?: number };
    expect(page.total).toBe(TOTAL);
  }, 180_000);
});
