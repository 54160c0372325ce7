import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster } from '../cluster/harness.js';
import { rulesDir } from '../support/rules-dir.js';
import { chargeLoad, notDeduplicatedAgain, rangeOf } from './charge-load.js';

const RULES = `
rules:
  - { name: once, priority: 1, condition: { field: action.action_type, eq: charge }, action: { type: deduplicate, ttl_seconds: 3600 } }
`;

/** The tenant (of the load's 16) whose slot is nearest above the start of its primary's range, and a primary to move it to. */
async function slotToMove(cluster: Cluster): Promise<{ tenant: string; slot: number; from: number; to: number; count: number }> {
  const primaries = await cluster.redisCluster.primaries();
  const admin = new Redis(primaries[0]?.port ?? 0, '127.0.0.1');
  try {
    let best: { tenant: string; slot: number; from: number; to: number; count: number } | undefined;
    for (let i = 0; i < 16; i++) {
      const tenant = `t-${i}`;
      const slot = Number(await admin.call('CLUSTER', 'KEYSLOT', `{payments:${tenant}}`));
      for (const p of primaries) {
        const range = rangeOf(p.slots, slot);
        const other = primaries.find((q) => q.port !== p.port);
        if (range === undefined || other === undefined) continue;
        const count = slot - (range[0] ?? 0) + 1;
        if (best === undefined || count < best.count) best = { tenant, slot, from: p.port, to: other.port, count };
      }
    }
    if (best === undefined) throw new Error("no primary serves the load's slots");
    return best;
  } finally {
    admin.disconnect();
  }
}

function servingPort(primaries: readonly { port: number; slots: string[] }[], slot: number): number | undefined {
  return primaries.find((p) => rangeOf(p.slots, slot) !== undefined)?.port;
}

/*
 * Slots move between primaries under dispatch load (`redis-cli --cluster reshard`, keys and all):
 * the clients follow the MOVED and ASK redirections and retry TRYAGAIN, so no dispatcher sees an
 * error, and every dedup key written before, during or after the move is still found.
 */
describe('a Redis Cluster resharded under load', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await Cluster.start({ redis: 'cluster', apis: 2, workers: 1, config: { rules: { directory: rulesDir({ 'rules.yaml': RULES }) } } });
  }, 90_000);
  afterAll(() => cluster?.stop());

  it('answers every dispatch while slots move, and loses no dedup key', async () => {
    // redis-cli moves a primary's lowest slots first: move just enough to take a tenant's slot along.
    const target = await slotToMove(cluster);
    const moving = (async () => {
      await new Promise((r) => setTimeout(r, 1500));
      const started = Date.now();
      await cluster.redisCluster.reshard(target.from, target.to, target.count);
      const owner = servingPort(await cluster.redisCluster.primaries(), target.slot);
      await cluster.redisCluster.reshard(target.to, target.from, Math.ceil(target.count / 2));
      return { movedIn: Date.now() - started, owner };
    })();
    const answers = await chargeLoad(cluster, 12_000, 6);
    const { movedIn, owner: ownerAfterMove } = await moving;
    const failed = answers.filter((a) => a.status !== 200);
    // The load outlasted the moves: they happened under it.
    expect(movedIn + 1500).toBeLessThan(12_000);
    console.log(
      `resharding: ${target.count + Math.ceil(target.count / 2)} slots moved (tenant ${target.tenant}'s among them) in ${movedIn} ms under ${answers.length} dispatches, ${failed.length} not answered 200`,
    );
    // The tenant's slot really went to the other primary, keys and all.
    expect(ownerAfterMove).toBe(target.to);
    expect(failed).toEqual([]);
    expect(answers.every((a) => a.outcome === 'executed')).toBe(true);
    expect(await notDeduplicatedAgain(cluster, answers)).toEqual([]);
  });
});
