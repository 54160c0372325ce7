import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poll } from '../support/poll.js';
import { sampleAction } from '../support/start-gateway.js';
import { Cluster, REDIS_DEPLOYMENTS } from './harness.js';

const POLICIES = [
  { id: 'race-block', namespace: 'payments', tenant: 'race-block', max_actions: 10, window: 'monthly', overage_behavior: 'block' },
  { id: 'race-warn', namespace: 'payments', tenant: 'race-warn', max_actions: 10, window: 'monthly', overage_behavior: 'warn' },
];

type Outcome = { outcome: string; reason?: string; quota?: { id: string; used: number } };

async function dispatch(url: string, over: Record<string, unknown>): Promise<Outcome> {
  const res = await fetch(`${url}/v1/dispatch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(sampleAction(over)),
  });
  return (await res.json()) as Outcome;
}

const count = (outcomes: Outcome[], name: string) => outcomes.filter((o) => o.outcome === name).length;

describe.each(REDIS_DEPLOYMENTS)('quotas across 3 replicas sharing Redis (%s Redis)', (redis) => {
  let cluster: Cluster;
  const burst = (tenant: string, n: number) => Promise.all(Array.from({ length: n }, () => dispatch(cluster.nextApi().url, { tenant })));
  const usage = async (url: string, id: string) => (await (await fetch(`${url}/v1/quotas/${id}/usage`)).json()) as { used: number };

  beforeAll(async () => {
    cluster = await Cluster.start({ redis, apis: 3, workers: 0, config: { quotas: { policies: POLICIES } } });
  }, 60_000);
  afterAll(() => cluster?.stop());

  it('executes exactly 10 of 40 concurrent dispatches against a blocking limit of 10', async () => {
    const outcomes = await burst('race-block', 40);
    expect(count(outcomes, 'executed')).toBe(10);
    expect(count(outcomes, 'throttled')).toBe(30);
    for (const o of outcomes.filter((x) => x.outcome === 'throttled')) {
      expect(o).toMatchObject({ reason: 'quota_exceeded', quota: { id: 'race-block', used: 10 } });
    }
    // Every replica reads the same shared count.
    for (const api of cluster.apis) expect(await usage(api.url, 'race-block')).toMatchObject({ used: 10, remaining: 0 });
  });

  it('executes all 40 under a warn policy, counting every one', async () => {
    const outcomes = await burst('race-warn', 40);
    expect(count(outcomes, 'executed')).toBe(40);
    for (const api of cluster.apis) expect(await usage(api.url, 'race-warn')).toMatchObject({ used: 40 });
  });

  it('enforces a policy created on one replica on every replica within 1 s', async () => {
    const [first] = cluster.apis;
    if (!first) throw new Error('no replicas');
    const res = await fetch(`${first.url}/v1/quotas`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'late', namespace: 'payments', tenant: 'late', max_actions: 1, window: 'monthly' }),
    });
    expect(res.status).toBe(201);
    // The staleness bound under test: every replica has the policy within a second.
    const seenEverywhere = async () =>
      (await Promise.all(cluster.apis.map(async (api) => (await fetch(`${api.url}/v1/quotas/late`)).status === 200))).every(Boolean);
    await poll('the policy on every replica', seenEverywhere, { timeoutMs: 1000, intervalMs: 25 });
    const outcomes = await Promise.all(cluster.apis.map((api) => dispatch(api.url, { tenant: 'late' })));
    expect(count(outcomes, 'executed')).toBe(1);
    expect(count(outcomes, 'throttled')).toBe(2);
  });
});
