import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rulesDir } from '../support/rules-dir.js';
import { Cluster } from '../cluster/harness.js';
import calculateSlot from 'cluster-key-slot';
import { CHARGE_QUOTA, chargeLoad, notDeduplicatedAgain, outageAfter, quotaUsed, rangeOf } from './charge-load.js';

const RULES = `
rules:
  - { name: once, priority: 1, condition: { field: action.action_type, eq: charge }, action: { type: deduplicate, ttl_seconds: 3600 } }
`;

/*
 * The Redis primary dies (SIGKILL) under dispatch load, behind Sentinels and in a Redis Cluster
 * with a replica per primary. With state.wait_replicas: 1 every dedup key of an acknowledged
 * dispatch was on a replica before the answer, so after the promotion each one still
 * deduplicates, and every quota count is there: nothing acknowledged is lost. On the Cluster, the
 * tenants whose slots were on the surviving primaries have exact counts. The outage clients saw
 * is measured and printed.
 */
/** Dispatchers sending one charge at a time each. */
const LANES = 6;

describe.each(['sentinel', 'cluster'] as const)('the Redis primary dies under load (%s)', (deployment) => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await Cluster.start({
      redis: deployment,
      redisReplicas: 1,
      apis: 2,
      workers: 1,
      config: {
        rules: { directory: rulesDir({ 'rules.yaml': RULES }) },
        quotas: { policies: [CHARGE_QUOTA] },
        state: { wait_replicas: 1, wait_timeout_ms: 300 },
      },
    });
  }, 90_000);
  afterAll(() => cluster?.stop());

  it('resumes after the promotion, and every acknowledged dedup key survives it', async () => {
    let killedAt = 0;
    /** The killed primary's slots (the Sentinel's primary holds every key). */
    let lostSlots: string[] = ['0-16383'];
    const killer = (async () => {
      await new Promise((r) => setTimeout(r, 2000));
      killedAt = Date.now();
      const victim = deployment === 'sentinel' ? undefined : (await cluster.redisCluster.primaries())[0];
      if (victim !== undefined) lostSlots = victim.slots;
      const port = deployment === 'sentinel' ? await cluster.sentinel.primaryPort() : victim?.port;
      const servers = deployment === 'sentinel' ? cluster.sentinel.servers : cluster.redisCluster.servers;
      await servers.find((s) => s.port === port)?.kill();
    })();
    const answers = await chargeLoad(cluster, 14_000, LANES);
    await killer;
    const outage = outageAfter(answers, killedAt);
    const failed = answers.filter((a) => a.status !== 200);
    console.log(
      `${deployment} failover: ${answers.length} dispatches, ${failed.length} not answered 200 (${[...new Set(failed.map((a) => a.status))].join(', ')}); longest gap without a success after the kill: ${outage} ms`,
    );
    // Dispatches resumed well before the end of the load, after the promotion. Slowly: the promoted
    // primary has no replica, so each deciding write (the quota count, the dedup key) waits out
    // wait_timeout_ms (grouped) — about 2 × 300 ms per dispatch on each of the 6 lanes.
    expect(answers.filter((a) => a.status === 200 && a.at > killedAt + outage).length).toBeGreaterThan(20);
    expect(outage).toBeLessThan(10_000);
    // Refusals while no primary answered are 503s a client retries, never a wrong outcome.
    expect(failed.every((a) => a.status === 503 || a.status === 0)).toBe(true);
    const acknowledged = answers.filter((a) => a.status === 200);
    expect(acknowledged.every((a) => a.outcome === 'executed')).toBe(true);
    // Window counters: each tenant's quota count holds every charge acknowledged, and no more than
    // were sent (a refused one may have counted before its refusal) — but for the charges in flight
    // when the primary died: one that it ran and replicated without its answer getting out is sent
    // again by the client after the promotion, and counts twice. A lane has one dispatch in flight,
    // so that is at most one per lane, over all tenants. Where the primary lived, exact.
    const tenants = [...new Set(answers.map((a) => a.tenant))];
    const counts = await Promise.all(
      tenants.map(async (tenant) => {
        const mine = answers.filter((a) => a.tenant === tenant);
        const executed = mine.filter((a) => a.status === 200).length;
        const survived = rangeOf(lostSlots, calculateSlot(`{payments:${tenant}}`)) === undefined;
        return { tenant, executed, refused: mine.length - executed, used: await quotaUsed(cluster, tenant), survived };
      }),
    );
    console.log(
      `${deployment} failover, quota counts (used − acknowledged): ${counts.map((c) => `${c.tenant}${c.survived ? '' : '*'} ${c.used - c.executed}`).join(', ')} (* on the killed primary)`,
    );
    for (const c of counts) {
      expect(c.used, c.tenant).toBeGreaterThanOrEqual(c.executed);
      if (c.survived) expect(c.used, c.tenant).toBe(c.executed);
    }
    const countedAgain = counts.reduce((sum, c) => sum + Math.max(0, c.used - (c.executed + c.refused)), 0);
    expect(countedAgain).toBeLessThanOrEqual(LANES);
    expect(counts.some((c) => c.survived)).toBe(deployment === 'cluster');
    // Nothing acknowledged is lost: the same dedup key again is deduplicated, for every one of them.
    expect(await notDeduplicatedAgain(cluster, acknowledged)).toEqual([]);
  });
});
