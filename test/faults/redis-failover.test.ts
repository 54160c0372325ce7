import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rulesDir } from '../support/rules-dir.js';
import { Cluster } from '../cluster/harness.js';
import { chargeLoad, notDeduplicatedAgain, outageAfter } from './charge-load.js';

const RULES = `
rules:
  - { name: once, priority: 1, condition: { field: action.action_type, eq: charge }, action: { type: deduplicate, ttl_seconds: 3600 } }
`;

/*
 * The Redis primary dies (SIGKILL) under dispatch load, behind Sentinels and in a Redis Cluster
 * with a replica per primary. With state.wait_replicas: 1 every dedup key of an acknowledged
 * dispatch was on a replica before the answer, so after the promotion each one still
 * deduplicates: nothing acknowledged is lost. The outage clients saw is measured and printed.
 */
describe.each(['sentinel', 'cluster'] as const)('the Redis primary dies under load (%s)', (deployment) => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await Cluster.start({
      redis: deployment,
      redisReplicas: 1,
      apis: 2,
      workers: 1,
      config: { rules: { directory: rulesDir({ 'rules.yaml': RULES }) }, state: { wait_replicas: 1, wait_timeout_ms: 300 } },
    });
  }, 90_000);
  afterAll(() => cluster?.stop());

  it('resumes after the promotion, and every acknowledged dedup key survives it', async () => {
    let killedAt = 0;
    const killer = (async () => {
      await new Promise((r) => setTimeout(r, 2000));
      killedAt = Date.now();
      const port = deployment === 'sentinel' ? await cluster.sentinel.primaryPort() : (await cluster.redisCluster.primaries())[0]?.port;
      const servers = deployment === 'sentinel' ? cluster.sentinel.servers : cluster.redisCluster.servers;
      await servers.find((s) => s.port === port)?.kill();
    })();
    const answers = await chargeLoad(cluster, 14_000, 6);
    await killer;
    const outage = outageAfter(answers, killedAt);
    const failed = answers.filter((a) => a.status !== 200);
    console.log(
      `${deployment} failover: ${answers.length} dispatches, ${failed.length} not answered 200 (${[...new Set(failed.map((a) => a.status))].join(', ')}); longest gap without a success after the kill: ${outage} ms`,
    );
    // Dispatches resumed well before the end of the load, after the promotion.
    expect(answers.filter((a) => a.status === 200 && a.at > killedAt + outage).length).toBeGreaterThan(50);
    expect(outage).toBeLessThan(10_000);
    // Refusals while no primary answered are 503s a client retries, never a wrong outcome.
    expect(failed.every((a) => a.status === 503 || a.status === 0)).toBe(true);
    const acknowledged = answers.filter((a) => a.status === 200);
    expect(acknowledged.every((a) => a.outcome === 'executed')).toBe(true);
    // Nothing acknowledged is lost: the same dedup key again is deduplicated, for every one of them.
    expect(await notDeduplicatedAgain(cluster, acknowledged)).toEqual([]);
  });
});
