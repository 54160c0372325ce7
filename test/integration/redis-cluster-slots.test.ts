import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { poll } from '../support/poll.js';
import { redisErrorCounts } from '../support/redis-cluster.js';
import { testRedisClusterNodes } from '../support/redis-url.js';
import { rulesDir } from '../support/rules-dir.js';
import { postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const RULES = `
rules:
  - { name: once, priority: 1, condition: { field: action.action_type, eq: charge }, action: { type: deduplicate, ttl_seconds: 60 } }
  - { name: limited, priority: 2, condition: { field: action.action_type, eq: ping }, action: { type: throttle, max_count: 2, window_seconds: 60 } }
  - { name: batched, priority: 3, condition: { field: action.action_type, eq: alert }, action: { type: group, group_by: [payload.cluster], group_wait_seconds: 1 } }
  - { name: checked, priority: 4, condition: { field: action.action_type, eq: wire }, action: { type: require_approval, ttl_seconds: 3600 } }
  - { name: chained, priority: 5, condition: { field: action.action_type, eq: onboard }, action: { type: chain, chain_name: onboard } }
`;

/*
 * Redis Cluster answers CROSSSLOT to a command, script or transaction whose keys span slots. A
 * gateway on a 3-primary cluster runs every kind of state a dispatch touches, for many tenants
 * (so many slots): dedup, throttle, quota, a group flush, an approval, a chain, the audit trail
 * with its queries and analytics. Everything must work, and no node may have answered CROSSSLOT.
 */
describe('one gateway on a Redis Cluster: dispatch, flush, chain and approval, all within slots', () => {
  let gw: RunningGateway;
  let sink: HttpSink;
  const tenants = Array.from({ length: 12 }, (_, i) => `tenant-${i}`);
  const dispatch = async (tenant: string, overrides: Record<string, unknown>) => {
    const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant, provider: 'hook', ...overrides }));
    expect(res.status).toBe(200);
    return res.body as Record<string, unknown>;
  };

  beforeAll(async () => {
    sink = await startSink();
    gw = await startGateway('redis-cluster', {
      providers: [{ name: 'hook', type: 'webhook', url: sink.url }],
      rules: { directory: rulesDir({ 'rules.yaml': RULES }) },
      chains: {
        definitions: [
          {
            name: 'onboard',
            steps: [
              { name: 'one', provider: 'hook', action_type: 'first' },
              { name: 'two', provider: 'hook', action_type: 'second' },
            ],
          },
        ],
      },
      quotas: { policies: [{ id: 'capped', namespace: 'payments', tenant: 'tenant-3', max_actions: 1000, window: 'monthly', overage_behavior: 'block' }] },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await sink?.close();
  });

  it('runs every stateful path for many tenants without one CROSSSLOT', async () => {
    const before = (await redisErrorCounts(testRedisClusterNodes())).CROSSSLOT ?? 0;
    for (const tenant of tenants) {
      expect(await dispatch(tenant, { action_type: 'charge', dedup_key: 'k' })).toMatchObject({ outcome: 'executed' });
      expect(await dispatch(tenant, { action_type: 'charge', dedup_key: 'k' })).toMatchObject({ outcome: 'deduplicated' });
      for (let i = 0; i < 3; i++) await dispatch(tenant, { action_type: 'ping' });
      await dispatch(tenant, { action_type: 'alert', payload: { cluster: 'c1' } });
    }
    const batch = await postJson(`${gw.url}/v1/dispatch/batch`, { actions: tenants.map((tenant) => sampleAction({ tenant, provider: 'hook' })) });
    expect(batch.status).toBe(200);

    // An approval, decided through its link.
    const pending = (await dispatch('tenant-0', { action_type: 'wire' })) as { approve_url: string; action_id: string };
    const approve = new URL(pending.approve_url);
    expect((await postJson(`${gw.url}${approve.pathname}${approve.search}`, undefined)).body).toMatchObject({ status: 'approved' });

    // A chain, to its end.
    const started = (await dispatch('tenant-1', { action_type: 'onboard' })) as { chain_id: string };
    await poll(
      'the chain to complete',
      async () => (await requestJson('GET', `${gw.url}/v1/chains/${started.chain_id}`)).body?.status,
      (status) => status === 'completed',
      { timeoutMs: 15_000, intervalMs: 50 },
    );

    // The groups flush (group_wait 1 s), one notification per tenant.
    await poll(
      'every tenant group flushed',
      () => sink.received.filter((c) => c.payload['group_id'] !== undefined).length,
      (n) => n >= tenants.length,
      {
        timeoutMs: 15_000,
        intervalMs: 100,
      },
    );

    // The audit trail, its queries and analytics, across tenants.
    const audit = await requestJson('GET', `${gw.url}/v1/audit?namespace=payments&limit=500`);
    expect(audit.status).toBe(200);
    expect((audit.body as { records: unknown[] }).records.length).toBeGreaterThan(tenants.length * 6);
    expect((await requestJson('GET', `${gw.url}/v1/audit/${pending.action_id}`)).body).toMatchObject({ outcome: 'executed' });
    expect((await requestJson('GET', `${gw.url}/v1/analytics?metric=volume&interval=hourly`)).status).toBe(200);
    // tenant-3: 2 charges, 3 pings, an alert and one action of the batch.
    expect((await requestJson('GET', `${gw.url}/v1/quotas/capped/usage`)).body).toMatchObject({ used: 7 });

    expect(((await redisErrorCounts(testRedisClusterNodes())).CROSSSLOT ?? 0) - before).toBe(0);
  });
});
