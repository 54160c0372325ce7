import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, WILDCARD_GRANT, type TestGrant, type TestKey } from '../support/credentials.js';
import { BACKENDS, postJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

/** The grant most cases are judged against: tenant acme (and its children), one namespace, provider and action. */
const ACME: TestGrant = { tenants: ['acme'], namespaces: ['payments'], providers: ['email'], actions: ['send'] };

const CALLERS: TestKey[] = [
  { name: 'root', role: 'admin', grants: [WILDCARD_GRANT] },
  { name: 'acme-op', role: 'operator', grants: [ACME] },
  { name: 'acme-eu-op', role: 'operator', grants: [{ ...ACME, tenants: ['acme.eu'] }] },
  { name: 'acme-viewer', role: 'viewer', grants: [ACME] },
  { name: 'multi-op', role: 'operator', grants: [ACME, { ...ACME, tenants: ['globex'] }] },
  { name: 'acme-admin', role: 'admin', grants: [{ tenants: ['acme'], namespaces: ['*'], actions: ['*'] }] },
  { name: 'wild-op', role: 'operator', grants: [WILDCARD_GRANT] },
];

type Tuple = { namespace: string; tenant: string; provider: string; action_type: string };
const BASE: Tuple = { namespace: 'payments', tenant: 'acme', provider: 'email', action_type: 'send' };

/** [case, caller, change to BASE, allowed by a full-tuple check, allowed by a tenant+namespace check]. */
const CASES: [string, string, Partial<Tuple>, boolean, boolean][] = [
  ['in scope', 'acme-op', {}, true, true],
  ['child tenant', 'acme-op', { tenant: 'acme.eu' }, true, true],
  ['grandchild tenant', 'acme-op', { tenant: 'acme.eu.paris' }, true, true],
  ['X-suffix tenant', 'acme-op', { tenant: 'acme-eu' }, false, false],
  ['Xsuffix tenant', 'acme-op', { tenant: 'acmecorp' }, false, false],
  ['out-of-scope tenant', 'acme-op', { tenant: 'globex' }, false, false],
  ['parent tenant', 'acme-eu-op', { tenant: 'acme' }, false, false],
  ['sibling tenant', 'acme-eu-op', { tenant: 'acme.us' }, false, false],
  ['own tenant of a child grant', 'acme-eu-op', { tenant: 'acme.eu' }, true, true],
  ['other namespace', 'acme-op', { namespace: 'billing' }, false, false],
  ['other provider', 'acme-op', { provider: 'sms' }, false, true],
  ['other action type', 'acme-op', { action_type: 'refund' }, false, true],
  ['second grant of a multi-tenant caller', 'multi-op', { tenant: 'globex' }, true, true],
  ['wildcard caller', 'root', { tenant: 'anyone', namespace: 'anything', provider: 'x', action_type: 'y' }, true, true],
];

interface Row {
  endpoint: string;
  /** `full`: tenant, namespace, provider and action type; `scope`: tenant and namespace only. */
  check: 'full' | 'scope';
  /** Found by id alone: what the grants do not cover is 404 (a 403 would say it exists in another tenant). */
  hidden?: true;
  send(gw: RunningGateway, caller: string, tuple: Tuple): Promise<{ status: number; body: unknown }>;
}

const get = async (url: string, caller: string) => {
  const res = await fetch(url, { headers: keyHeader(caller) });
  return { status: res.status, body: await res.json() };
};

let recordedCount = 0;
/** Dispatches the tuple as the wildcard admin and returns its action id (a record to read or replay). */
async function recorded(gw: RunningGateway, t: Tuple): Promise<string> {
  const id = `rec-${recordedCount++}`;
  const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ ...t, id }), keyHeader('root'));
  if (res.status !== 200) throw new Error(`setup dispatch failed: ${res.status}`);
  return id;
}

/** Every row of the spec's enforcement table whose endpoint exists, plus the other scoped endpoints. */
const ROWS: Row[] = [
  { endpoint: 'POST /v1/dispatch', check: 'full', send: (gw, c, t) => postJson(`${gw.url}/v1/dispatch`, sampleAction(t), keyHeader(c)) },
  {
    endpoint: 'POST /v1/dispatch?dry_run=true',
    check: 'full',
    send: (gw, c, t) => postJson(`${gw.url}/v1/dispatch?dry_run=true`, sampleAction(t), keyHeader(c)),
  },
  {
    endpoint: 'POST /v1/dispatch/batch',
    check: 'full',
    send: (gw, c, t) => postJson(`${gw.url}/v1/dispatch/batch`, { actions: [sampleAction(t), sampleAction(t)] }, keyHeader(c)),
  },
  {
    endpoint: 'POST /v1/rules/evaluate',
    check: 'scope',
    send: (gw, c, t) => postJson(`${gw.url}/v1/rules/evaluate`, { ...t, payload: {} }, keyHeader(c)),
  },
  {
    endpoint: 'GET /v1/quotas?tenant=&namespace=',
    check: 'scope',
    send: (gw, c, t) => get(`${gw.url}/v1/quotas?tenant=${t.tenant}&namespace=${t.namespace}`, c),
  },
  {
    endpoint: 'GET /v1/audit/{id}',
    check: 'full',
    hidden: true,
    send: async (gw, c, t) => get(`${gw.url}/v1/audit/${await recorded(gw, t)}`, c),
  },
  {
    endpoint: 'POST /v1/audit/{id}/replay',
    check: 'full',
    hidden: true,
    send: async (gw, c, t) => postJson(`${gw.url}/v1/audit/${await recorded(gw, t)}/replay`, {}, keyHeader(c)),
  },
  {
    endpoint: 'GET /v1/audit?tenant=&namespace=',
    check: 'scope',
    send: (gw, c, t) => get(`${gw.url}/v1/audit?tenant=${t.tenant}&namespace=${t.namespace}`, c),
  },
  {
    endpoint: 'POST /v1/audit/replay?tenant=&namespace=',
    check: 'scope',
    send: (gw, c, t) => postJson(`${gw.url}/v1/audit/replay?tenant=${t.tenant}&namespace=${t.namespace}&limit=1`, {}, keyHeader(c)),
  },
  {
    endpoint: 'GET /v1/analytics?tenant=&namespace=',
    check: 'scope',
    send: (gw, c, t) => get(`${gw.url}/v1/analytics?metric=volume&tenant=${t.tenant}&namespace=${t.namespace}`, c),
  },
  {
    endpoint: 'GET /v1/rules/coverage?tenant=&namespace=',
    check: 'scope',
    send: (gw, c, t) => get(`${gw.url}/v1/rules/coverage?tenant=${t.tenant}&namespace=${t.namespace}`, c),
  },
  {
    endpoint: 'GET /v1/retention?tenant=&namespace=',
    check: 'scope',
    send: (gw, c, t) => get(`${gw.url}/v1/retention?tenant=${t.tenant}&namespace=${t.namespace}`, c),
  },
  {
    endpoint: 'GET /v1/quotas/{id}/usage',
    check: 'scope',
    send: (gw, c, t) => get(`${gw.url}/v1/quotas/everyone/usage?tenant=${t.tenant}&namespace=${t.namespace}`, c),
  },
];

const POLICIES = [
  { id: 'everyone', namespace: '*', tenant: '*', max_actions: 1_000_000, window: 'daily' },
  { id: 'acme', namespace: 'payments', tenant: 'acme', max_actions: 1_000_000, window: 'daily' },
  { id: 'acme-eu', namespace: 'payments', tenant: 'acme.eu', max_actions: 1_000_000, window: 'daily' },
  { id: 'globex', namespace: 'payments', tenant: 'globex', max_actions: 1_000_000, window: 'daily' },
];

describe.each(BACKENDS)('grant and role enforcement (%s backend)', (backend) => {
  let gw: RunningGateway;
  beforeAll(async () => {
    const { file } = credentialsFile({ keys: CALLERS });
    gw = await startGateway(backend, { auth: { enabled: true, file }, quotas: { policies: POLICIES } });
  });
  afterAll(() => gw.close());

  describe.each(ROWS)('$endpoint', (row) => {
    it.each(CASES)('%s (%s)', async (_case, caller, change, fullAllowed, scopeAllowed) => {
      const allowed = row.check === 'full' ? fullAllowed : scopeAllowed;
      const res = await row.send(gw, caller, { ...BASE, ...change });
      if (allowed) expect(res.status).toBe(200);
      else if (row.hidden) expect(res).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
      else expect(res).toMatchObject({ status: 403, body: { code: 'FORBIDDEN', error: expect.stringMatching(/^forbidden: no grant covers tenant=/) } });
    });
  });

  const dispatched = async () => ((await (await fetch(`${gw.url}/health`)).json()) as { metrics: { dispatched: number } }).metrics.dispatched;

  it('rejects a whole batch when one action is out of scope, executing none of it', async () => {
    const before = await dispatched();
    const res = await postJson(
      `${gw.url}/v1/dispatch/batch`,
      { actions: [sampleAction(), sampleAction({ tenant: 'acme.eu' }), sampleAction({ tenant: 'globex' })] },
      keyHeader('acme-op'),
    );
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: 'forbidden: no grant covers tenant=globex, namespace=payments, provider=email, action=send' });
    expect(await dispatched()).toBe(before);
  });

  it('refuses dispatch to a viewer even with a matching grant', async () => {
    const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction(), keyHeader('acme-viewer'));
    expect(res).toMatchObject({ status: 403, body: { code: 'FORBIDDEN', error: 'forbidden: role viewer lacks the dispatch permission' } });
  });

  it('lets a viewer read rules and use the playground within its grants', async () => {
    expect((await get(`${gw.url}/v1/rules`, 'acme-viewer')).status).toBe(200);
    expect((await postJson(`${gw.url}/v1/rules/evaluate`, { ...BASE, payload: {} }, keyHeader('acme-viewer'))).status).toBe(200);
  });

  it('refuses rules reload to an operator even with a wildcard grant, and allows it to an admin', async () => {
    const refused = await postJson(`${gw.url}/v1/rules/reload`, {}, keyHeader('wild-op'));
    expect(refused).toMatchObject({ status: 403, body: { error: 'forbidden: role operator lacks the admin permission' } });
    expect((await postJson(`${gw.url}/v1/rules/reload`, {}, keyHeader('root'))).status).toBe(200);
  });

  it('lets operators manage rules only with a grant over every tenant (rules apply to all)', async () => {
    const rule = (name: string) => ({ name, priority: 5, condition: { field: 'action.tenant', eq: 'nobody' }, action: { type: 'suppress' } });
    expect((await postJson(`${gw.url}/v1/rules`, rule('by-wild-op'), keyHeader('wild-op'))).status).toBe(201);
    const scoped = await postJson(`${gw.url}/v1/rules`, rule('by-acme-admin'), keyHeader('acme-admin'));
    expect(scoped).toMatchObject({ status: 403, body: { error: 'forbidden: no grant covers tenant=*, namespace=*' } });
    expect((await postJson(`${gw.url}/v1/rules`, rule('by-viewer'), keyHeader('acme-viewer'))).status).toBe(403);
  });

  it('lets an admin manage quota policies only inside its grants', async () => {
    const policy = (id: string, tenant: string) => ({ id, namespace: 'payments', tenant, max_actions: 5, window: 'hourly' });
    expect((await postJson(`${gw.url}/v1/quotas`, policy('acme-child', 'acme.fr'), keyHeader('acme-admin'))).status).toBe(201);
    expect((await postJson(`${gw.url}/v1/quotas`, policy('theirs', 'globex.fr'), keyHeader('acme-admin'))).status).toBe(403);
    expect((await postJson(`${gw.url}/v1/quotas`, policy('any', '*'), keyHeader('acme-admin'))).status).toBe(403);
    expect((await postJson(`${gw.url}/v1/quotas`, policy('by-op', 'acme.de'), keyHeader('acme-op'))).status).toBe(403);
    const del = (id: string, caller: string) => fetch(`${gw.url}/v1/quotas/${id}`, { method: 'DELETE', headers: keyHeader(caller) });
    expect((await get(`${gw.url}/v1/quotas/globex`, 'acme-admin')).status).toBe(404);
    // Its usage too: a 403 naming globex would say the policy exists there.
    expect(await get(`${gw.url}/v1/quotas/globex/usage`, 'acme-op')).toEqual({
      status: 404,
      body: { code: 'NOT_FOUND', error: 'quota policy not found: globex' },
    });
    expect((await get(`${gw.url}/v1/quotas/acme/usage`, 'acme-op')).status).toBe(200);
    expect((await del('acme-child', 'acme-admin')).status).toBe(204);
  });

  it('lists only the audit records the caller could read by id: provider and action type count too', async () => {
    const namespace = 'payments';
    const tenant = 'acme.listing';
    const mine = await recorded(gw, { ...BASE, tenant });
    const otherProvider = await recorded(gw, { ...BASE, tenant, provider: 'sms' });
    const otherAction = await recorded(gw, { ...BASE, tenant, action_type: 'refund' });
    const listed = async (caller: string) => {
      const res = await get(`${gw.url}/v1/audit?namespace=${namespace}&tenant=${tenant}`, caller);
      expect(res.status).toBe(200);
      return (res.body as { records: { action_id: string }[] }).records.map((r) => r.action_id).sort();
    };
    expect(await listed('acme-op')).toEqual([mine]);
    expect((await get(`${gw.url}/v1/audit/${otherProvider}`, 'acme-op')).status).toBe(404);
    expect(await listed('root')).toEqual([mine, otherAction, otherProvider].sort());
    // A grant on the tenant without provider or action limits sees them all.
    expect(await listed('acme-admin')).toEqual([mine, otherAction, otherProvider].sort());
  });

  it('auto-scopes lists for a single-tenant caller and filters them to the grants of others', async () => {
    const ids = async (caller: string, query = '') => {
      const res = await get(`${gw.url}/v1/quotas${query}`, caller);
      expect(res.status).toBe(200);
      return (res.body as { quotas: { id: string }[] }).quotas.map((q) => q.id).sort();
    };
    expect(await ids('acme-op')).toEqual(['acme']);
    expect(await ids('acme-op', '?tenant=acme.eu')).toEqual(['acme-eu']);
    expect(await ids('multi-op')).toEqual(['acme', 'acme-eu', 'globex']);
    expect(await ids('root')).toEqual(['acme', 'acme-eu', 'everyone', 'globex']);
    expect((await get(`${gw.url}/v1/quotas?tenant=globex`, 'acme-op')).status).toBe(403);
  });
});
