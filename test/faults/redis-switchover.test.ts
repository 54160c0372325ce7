import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster } from '../cluster/harness.js';
import { poll } from '../support/poll.js';
import { withNode } from '../support/redis-node.js';
import { rulesDir } from '../support/rules-dir.js';
import { chargeLoad, notDeduplicatedAgain } from './charge-load.js';

const RULES = `
rules:
  - { name: once, priority: 1, condition: { field: action.action_type, eq: charge }, action: { type: deduplicate, ttl_seconds: 3600 } }
`;
const LANES = 4;
/** How long after SENTINEL FAILOVER every process must be writing to the new primary. */
const SWITCH_BOUND_MS = 3000;

/*
 * A planned switchover behind Sentinels: the replica is promoted while the old primary keeps
 * running, accepting writes until the Sentinels demote it (seconds later), when it resyncs from
 * the new primary and drops what it took meanwhile. The clients must follow the Sentinels'
 * +switch-master announcement rather than wait for their connection to drop: a dispatch
 * acknowledged after the switch must be on the new primary, so its dedup key survives.
 */
describe('a Sentinel switchover with the old primary still up', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await Cluster.start({ redis: 'sentinel', apis: 2, workers: 1, config: { rules: { directory: rulesDir({ 'rules.yaml': RULES }) } } });
  }, 90_000);
  afterAll(() => cluster?.stop());

  it('moves every process to the promoted primary at once: nothing acknowledged after the switch is lost', async () => {
    let switchedAt = 0;
    const { sentinels, name } = cluster.sentinel;
    const before = await cluster.sentinel.primaryPort();
    const switcher = (async () => {
      await new Promise((r) => setTimeout(r, 1500));
      switchedAt = Date.now();
      await withNode(Number(sentinels[0]?.split(':')[1]), (n) => n.call('SENTINEL', 'FAILOVER', name));
    })();
    const answers = await chargeLoad(cluster, 9000, LANES);
    await switcher;
    expect(await cluster.sentinel.primaryPort()).not.toBe(before);
    // The Sentinels demote the old primary at their next look at it (up to ~10 s): it then resyncs,
    // dropping whatever it took after the switch. Check the keys once that has happened.
    await poll(
      'the old primary to be demoted',
      async () => (await withNode(before, (n) => n.call('ROLE') as Promise<unknown[]>, cluster.sentinel.password).catch(() => []))[0] === 'slave',
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    const late = answers.filter((a) => a.status === 200 && a.at > switchedAt + SWITCH_BOUND_MS);
    const lost = await notDeduplicatedAgain(cluster, late);
    console.log(
      `sentinel switchover: ${answers.length} dispatches, ${late.length} acknowledged from ${SWITCH_BOUND_MS} ms after the switch; their dedup keys lost: ${lost.length}`,
    );
    expect(late.length).toBeGreaterThan(20);
    expect(lost).toEqual([]);
  });
});
