import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poll } from '../support/poll.js';
import { rulesDir } from '../support/rules-dir.js';
import { sampleAction } from '../support/start-gateway.js';
import { Cluster } from './harness.js';

const RULES = `
rules:
  - name: once-per-order
    priority: 1
    condition: { field: action.action_type, eq: charge }
    action: { type: deduplicate, ttl_seconds: 300 }
  - name: five-per-minute
    priority: 2
    condition: { field: action.action_type, eq: sms }
    action: { type: throttle, max_count: 5, window_seconds: 60 }
  - name: toggled
    priority: 3
    condition: { field: action.action_type, eq: toggled }
    action: { type: suppress }
`;

async function dispatch(url: string, over: Record<string, unknown>) {
  const res = await fetch(`${url}/v1/dispatch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(sampleAction(over)),
  });
  return (await res.json()) as { outcome: string };
}

const count = (outcomes: { outcome: string }[], name: string) => outcomes.filter((o) => o.outcome === name).length;

/** Polls until `check` passes on every replica; `ms` is the staleness bound under test. */
function everyReplicaWithin(cluster: Cluster, ms: number, check: (url: string) => Promise<boolean>): Promise<boolean> {
  const everywhere = async () => (await Promise.all(cluster.apis.map((api) => check(api.url)))).every(Boolean);
  return poll(`every replica to converge within ${ms} ms`, everywhere, { timeoutMs: ms, intervalMs: 25 });
}

describe('rules across 3 replicas sharing Redis', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await Cluster.start({ apis: 3, workers: 1, config: { rules: { directory: rulesDir({ 'rules.yaml': RULES }) } } });
  }, 60_000);
  afterAll(() => cluster?.stop());

  it('deduplicates 20 concurrent dispatches of one dedup_key to exactly 1 execution', async () => {
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => dispatch(cluster.nextApi().url, { action_type: 'charge', dedup_key: 'order-42' })));
    expect(count(outcomes, 'executed')).toBe(1);
    expect(count(outcomes, 'deduplicated')).toBe(19);
  });

  it('lets exactly max_count=5 of 30 concurrent throttled dispatches through', async () => {
    const outcomes = await Promise.all(Array.from({ length: 30 }, () => dispatch(cluster.nextApi().url, { action_type: 'sms', tenant: 'burst' })));
    expect(count(outcomes, 'executed')).toBe(5);
    expect(count(outcomes, 'throttled')).toBe(25);
  });

  it('propagates an enabled flag to every replica within 1 s', async () => {
    const [first] = cluster.apis;
    if (!first) throw new Error('no replicas');
    expect(await dispatch(first.url, { action_type: 'toggled' })).toMatchObject({ outcome: 'suppressed' });
    const res = await fetch(`${first.url}/v1/rules/toggled/enabled`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: false }),
    });
    expect(res.status).toBe(200);
    await everyReplicaWithin(cluster, 1000, async (url) => (await dispatch(url, { action_type: 'toggled' })).outcome === 'executed');
  });

  it('a disable racing a delete on another replica never leaves its flag on the next rule of that name', async () => {
    const [a, b] = cluster.apis;
    if (!a || !b) throw new Error('no replicas');
    const rule = { name: 'raced', priority: 5, condition: { field: 'action.action_type', eq: 'raced' }, action: { type: 'suppress' } };
    const send = (url: string, method: string, path: string, body?: unknown) =>
      fetch(`${url}${path}`, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
    for (let round = 0; round < 15; round++) {
      expect((await send(a.url, 'POST', '/v1/rules', rule)).status).toBe(201);
      await everyReplicaWithin(cluster, 1000, async (url) => (await dispatch(url, { action_type: 'raced' })).outcome === 'suppressed');
      const [deleted] = await Promise.all([send(a.url, 'DELETE', '/v1/rules/raced'), send(b.url, 'PUT', '/v1/rules/raced/enabled', { enabled: false })]);
      expect(deleted.status).toBe(204);
      expect((await send(a.url, 'POST', '/v1/rules', rule)).status).toBe(201);
      const listed = (await (await send(a.url, 'GET', '/v1/rules')).json()) as { rules: { name: string; enabled: boolean }[] };
      expect(listed.rules.find((r) => r.name === 'raced')?.enabled).toBe(true);
      expect((await send(a.url, 'DELETE', '/v1/rules/raced')).status).toBe(204);
    }
  });

  it('propagates a new API rule to every replica within 1 s', async () => {
    const last = cluster.apis.at(-1);
    if (!last) throw new Error('no replicas');
    const res = await fetch(`${last.url}/v1/rules`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'api-block', priority: 0, condition: { field: 'action.action_type', eq: 'fresh' }, action: { type: 'suppress' } }),
    });
    expect(res.status).toBe(201);
    await everyReplicaWithin(cluster, 1000, async (url) => {
      const list = (await (await fetch(`${url}/v1/rules`)).json()) as { rules: { name: string }[] };
      return list.rules.some((r) => r.name === 'api-block') && (await dispatch(url, { action_type: 'fresh' })).outcome === 'suppressed';
    });
  });
});
