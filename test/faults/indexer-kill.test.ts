import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster } from '../cluster/harness.js';
import { auditTrailConfig, type AuditTrailConfig } from '../support/audit-trails.js';
import { poll } from '../support/poll.js';
import { dispatchLoad } from '../support/dispatch-load.js';

const INGEST_LOG = 'sluice-cluster:audit-ingest:{_:_}:log';
const GROUP = 'indexer';
const TOTAL = 4000;
const CONCURRENCY = 32;

/** The pending batches of the ingest's group, by consumer: [id, consumer, idle ms, deliveries]. */
async function pendingByConsumer(redis: Redis): Promise<Map<string, number>> {
  const pending = (await redis.xpending(INGEST_LOG, GROUP, '-', '+', 10_000)) as [string, string, number, number][];
  const counts = new Map<string, number>();
  for (const [, consumer] of pending) counts.set(consumer, (counts.get(consumer) ?? 0) + 1);
  return counts;
}

/**
 * Audit indexers SIGKILLed while they hold a batch (read from the ingest log, not yet applied):
 * another consumer takes the batch over, and every acknowledged dispatch ends with exactly one
 * record, counted once in analytics — nothing lost, nothing indexed twice. With the trail in
 * PostgreSQL, exactly one row per dispatch (a batch inserted twice is stored once).
 */
describe.each(['state', 'postgres'] as const)('faults: audit indexers SIGKILLed mid-batch (audit.backend %s)', (backend) => {
  let cluster: Cluster;
  let redis: Redis;
  let trail: AuditTrailConfig;
  beforeAll(async () => {
    trail = await auditTrailConfig({ state: 'redis', postgres: backend === 'postgres' });
    cluster = await Cluster.start({ apis: 2, workers: 3, config: { audit: { index_claim_after_seconds: 1, index_batch_size: 200, ...trail.audit } } });
    redis = new Redis(cluster.redis.url);
  }, 60_000);
  afterAll(async () => {
    redis?.disconnect();
    await cluster?.stop();
    await trail?.stop();
  });

  it('hands a dead indexer’s batch to another and counts every dispatch once', async () => {
    const load = dispatchLoad(() => cluster.nextApi().url, { total: TOTAL, concurrency: CONCURRENCY, prefix: 'ix', tenant: 'indexed' });

    // Kill a worker while it holds a batch; what it held stays pending under its name. Seen holding
    // one, it is frozen (SIGSTOP) and checked again: still holding → SIGKILL; done meanwhile (a
    // loaded machine answers the check late) → resumed, and watched again.
    const killedMidBatch: number[] = [];
    for (const victim of cluster.workers.slice(0, 2)) {
      const pid = victim.child.pid;
      if (pid === undefined) throw new Error('worker has no pid');
      const consumerOf = (name: string) => name.includes(`-${pid}-`) && name.endsWith('-loop');
      const held = async () => [...(await pendingByConsumer(redis))].filter(([c]) => consumerOf(c)).reduce((sum, [, n]) => sum + n, 0);
      await poll(
        `worker ${pid} to be killed holding a batch`,
        async () => {
          if ((await held()) === 0) return false;
          victim.kill('SIGSTOP');
          // Frozen, it cannot acknowledge: what it holds now, it dies holding. (Counted here, not
          // after it exited: a batch read over a second ago may be taken over at once, as it should.)
          const holding = await held();
          if (holding > 0) {
            victim.kill('SIGKILL');
            killedMidBatch.push(holding);
            return true;
          }
          victim.kill('SIGCONT');
          return false;
        },
        { timeoutMs: 30_000, intervalMs: 0 },
      );
      await victim.exited;
    }
    const { answered, failed } = await load.done;
    expect(failed).toEqual([]);
    expect(killedMidBatch).toHaveLength(2);
    expect(answered.size).toBe(TOTAL);

    // The survivor takes the dead consumers' batches over (and reads the rest): the log empties.
    await poll(
      'the ingest log to be indexed',
      () => redis.xlen(INGEST_LOG),
      (n) => n === 0,
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const api = cluster.nextApi();
    const page = (await (await fetch(`${api.url}/v1/audit?namespace=payments&tenant=indexed&limit=1`)).json()) as { total?: number };
    const volume = (await (await fetch(`${api.url}/v1/analytics?metric=volume&namespace=payments&tenant=indexed`)).json()) as { total_count: number };
    expect(page.total).toBe(TOTAL);
    expect(volume.total_count).toBe(TOTAL);
    const coverage = (await (await fetch(`${api.url}/v1/rules/coverage?namespace=payments&tenant=indexed`)).json()) as { total_actions: number };
    expect(coverage.total_actions).toBe(TOTAL);
    if (trail.rowsOf !== null) {
      expect(await trail.rowsOf('indexed')).toEqual({ rows: TOTAL, actionIds: TOTAL });
      expect(await redis.keys('sluice-cluster:audit:*')).toEqual([]);
    }
  }, 180_000);
});
