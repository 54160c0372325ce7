import { windowBounds } from '@sluice/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rulesDir } from '../support/rules-dir.js';
import { ALL_BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

// A rule that would let everything through (or suppress it): quotas are checked first regardless.
const RULES = `
rules:
  - name: let-through
    priority: 1
    condition: { field: action.action_type, eq: send }
    action: { type: allow }
  - name: hush
    priority: 2
    condition: { field: action.action_type, eq: hushed }
    action: { type: suppress, reason: quiet }
`;

const POLICIES = [
  { id: 'blocking', namespace: 'payments', tenant: 'acme', max_actions: 3, window: 'monthly', overage_behavior: 'block' },
  { id: 'warning', namespace: 'payments', tenant: 'chatty', max_actions: 2, window: 'monthly', overage_behavior: 'warn' },
  { id: 'dry', namespace: 'payments', tenant: 'dry', max_actions: 1, window: 'monthly' },
  { id: 'ruled', namespace: 'payments', tenant: 'ruled', max_actions: 2, window: 'monthly' },
  { id: 'per-tenant', namespace: 'batch', tenant: '*', max_actions: 1, window: 'monthly' },
  { id: 'off', namespace: 'payments', tenant: 'free', max_actions: 1, window: 'hourly', enabled: false },
];

type Outcome = Record<string, unknown> & { outcome: string };

describe.each(ALL_BACKENDS)('quota enforcement through HTTP (%s backend)', (backend) => {
  let gw: RunningGateway;
  const dispatch = async (over: Record<string, unknown>, query = '') => (await postJson(`${gw.url}/v1/dispatch${query}`, sampleAction(over))).body as Outcome;
  const usage = async (id: string, query = '') => (await (await fetch(`${gw.url}/v1/quotas/${id}/usage${query}`)).json()) as Record<string, unknown>;

  beforeAll(async () => {
    gw = await startGateway(backend, { rules: { directory: rulesDir({ 'rules.yaml': RULES }) }, quotas: { policies: POLICIES } });
  });
  afterAll(() => gw.close());

  it('blocks at the limit with the throttled quota_exceeded outcome, and blocked attempts consume nothing', async () => {
    for (let i = 0; i < 3; i++) expect(await dispatch({ tenant: 'acme' })).toMatchObject({ outcome: 'executed' });
    const { endMs } = windowBounds('monthly', Date.now());
    const blocked = await dispatch({ tenant: 'acme', id: 'over-1' });
    expect(blocked).toEqual({
      outcome: 'throttled',
      action_id: 'over-1',
      reason: 'quota_exceeded',
      quota: { id: 'blocking', limit: 3, used: 3, window: 'monthly', resets_at: new Date(endMs).toISOString() },
      retry_after_seconds: expect.any(Number),
    });
    expect(blocked.retry_after_seconds).toBeGreaterThan(0);
    expect(blocked.retry_after_seconds).toBeLessThanOrEqual(Math.ceil((endMs - Date.now()) / 1000) + 1);
    for (let i = 0; i < 5; i++) expect(await dispatch({ tenant: 'acme' })).toMatchObject({ outcome: 'throttled' });
    expect(await usage('blocking')).toMatchObject({ used: 3, limit: 3, remaining: 0 });
    expect(gw.runtime.metrics.snapshot().throttled).toBeGreaterThanOrEqual(6);
  });

  it('counts batch items one by one', async () => {
    const body = (await postJson(`${gw.url}/v1/dispatch/batch`, { actions: [1, 2, 3].map(() => sampleAction({ namespace: 'batch', tenant: 'b1' })) })).body as {
      results: { outcome: Outcome }[];
    };
    expect(body.results.map((r) => r.outcome.outcome)).toEqual(['executed', 'throttled', 'throttled']);
  });

  it('counts each tenant separately under a * tenant policy', async () => {
    expect(await dispatch({ namespace: 'batch', tenant: 'x1' })).toMatchObject({ outcome: 'executed' });
    expect(await dispatch({ namespace: 'batch', tenant: 'x2' })).toMatchObject({ outcome: 'executed' });
    expect(await dispatch({ namespace: 'batch', tenant: 'x1' })).toMatchObject({ outcome: 'throttled', quota: { id: 'per-tenant' } });
    expect(await usage('per-tenant', '?tenant=x2')).toMatchObject({ namespace: 'batch', tenant: 'x2', used: 1 });
  });

  it('dry runs consume nothing and are not blocked', async () => {
    for (let i = 0; i < 3; i++) expect(await dispatch({ tenant: 'dry' }, '?dry_run=true')).toMatchObject({ outcome: 'dry_run' });
    expect(await usage('dry')).toMatchObject({ used: 0, remaining: 1 });
    expect(await dispatch({ tenant: 'dry' })).toMatchObject({ outcome: 'executed' });
    expect(await dispatch({ tenant: 'dry' }, '?dry_run=true')).toMatchObject({ outcome: 'dry_run', verdict: 'allow', matched_rule: 'let-through' });
    expect(await usage('dry')).toMatchObject({ used: 1 });
  });

  it('checks quotas before rules: an over-quota tenant is throttled whatever the rules say', async () => {
    // Admitted actions count even when a rule then suppresses them.
    expect(await dispatch({ tenant: 'ruled', action_type: 'hushed' })).toMatchObject({ outcome: 'suppressed', rule: 'hush' });
    expect(await dispatch({ tenant: 'ruled', action_type: 'send' })).toMatchObject({ outcome: 'executed' });
    expect(await dispatch({ tenant: 'ruled', action_type: 'send' })).toMatchObject({ outcome: 'throttled', reason: 'quota_exceeded' });
    expect(await dispatch({ tenant: 'ruled', action_type: 'hushed' })).toMatchObject({ outcome: 'throttled', reason: 'quota_exceeded' });
  });

  it('warn executes everything, counting and reporting the overage', async () => {
    for (let i = 0; i < 5; i++) expect(await dispatch({ tenant: 'chatty' })).toMatchObject({ outcome: 'executed' });
    expect(await usage('warning')).toMatchObject({ used: 5, limit: 2, remaining: 0, overage_behavior: 'warn' });
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    expect(text).toMatch(/sluice_quota_exceeded_total\{policy="warning",behavior="warn"\} 3/);
    expect(text).toMatch(/sluice_quota_exceeded_total\{policy="blocking",behavior="block"\} 6/);
  });

  it('a deleted policy takes its exceeded series with it once another policy starts one: churn leaves no series behind', async () => {
    const scrape = async () => (await fetch(`${gw.url}/metrics`)).text();
    for (const id of ['churn-1', 'churn-2', 'churn-3']) {
      expect((await postJson(`${gw.url}/v1/quotas`, { id, namespace: 'churn', tenant: id, max_actions: 1, window: 'daily' })).status).toBe(201);
      expect(await dispatch({ namespace: 'churn', tenant: id })).toMatchObject({ outcome: 'executed' });
      expect(await dispatch({ namespace: 'churn', tenant: id })).toMatchObject({ outcome: 'throttled' });
      expect(await scrape()).toMatch(new RegExp(`sluice_quota_exceeded_total\\{policy="${id}",behavior="block"\\} 1`));
      expect((await requestJson('DELETE', `${gw.url}/v1/quotas/${id}`)).status).toBe(204);
    }
    const text = await scrape();
    expect(text).not.toMatch(/policy="churn-1"/);
    expect(text).not.toMatch(/policy="churn-2"/);
    // The last one deleted keeps its series until a new one starts; live policies keep theirs.
    expect(text).toMatch(/policy="churn-3"/);
    expect(await dispatch({ tenant: 'acme' })).toMatchObject({ outcome: 'throttled', quota: { id: 'blocking' } });
    expect(await scrape()).toMatch(/sluice_quota_exceeded_total\{policy="blocking",behavior="block"\}/);
  });

  it('ignores disabled policies', async () => {
    for (let i = 0; i < 3; i++) expect(await dispatch({ tenant: 'free' })).toMatchObject({ outcome: 'executed' });
  });

  it('applies a policy created through the API at once, and its update', async () => {
    const created = await postJson(`${gw.url}/v1/quotas`, { namespace: 'payments', tenant: 'late', max_actions: 1, window: 'weekly' });
    expect(created.status).toBe(201);
    expect(await dispatch({ tenant: 'late' })).toMatchObject({ outcome: 'executed' });
    expect(await dispatch({ tenant: 'late' })).toMatchObject({ outcome: 'throttled' });
    const put = await fetch(`${gw.url}/v1/quotas/${String(created.body?.id)}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ max_actions: 2 }),
    });
    expect(put.status).toBe(200);
    expect(await dispatch({ tenant: 'late' })).toMatchObject({ outcome: 'executed' });
    expect(await dispatch({ tenant: 'late' })).toMatchObject({ outcome: 'throttled', quota: { limit: 2, used: 2 } });
  });
});

describe('config quota policies at start-up', () => {
  it('refuses two policies for one (namespace, tenant) pair, naming them', async () => {
    const policies = [
      { id: 'a', namespace: 'ns', tenant: 't', max_actions: 1, window: 'daily' },
      { id: 'b', namespace: 'ns', tenant: 't', max_actions: 2, window: 'hourly' },
    ];
    await expect(startGateway('memory', { quotas: { policies } })).rejects.toThrow(/policies "a" and "b" both apply to namespace "ns", tenant "t"/);
  });
});
