import { ManualClock } from '@sluice/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, WILDCARD_GRANT } from '../support/credentials.js';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { rulesDir } from '../support/rules-dir.js';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const RULES = `
rules:
  - { name: wires-need-approval, priority: 1, condition: { field: action.action_type, eq: wire }, action: { type: require_approval, ttl_seconds: 3600 } }
`;

type Pending = { approval_id: string; action_id: string; outcome: string };

/** The admin UI's decision route and the identity route, with authentication on. */
describe.each(BACKENDS)('approval decisions by an authenticated caller (%s)', (backend) => {
  let gw: RunningGateway;
  let sink: HttpSink;
  // The gateway's clock: moved past an approval's expires_at to decide while the expiry job has not run yet.
  const clock = new ManualClock(Date.now());
  const admin = keyHeader('admin');
  const request = async (tenant = 'acme', provider = 'hook') =>
    (await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant, provider, action_type: 'wire' }), admin)).body as Pending;
  const decide = (p: Pending, decision: unknown, headers = admin, tenant = 'acme') =>
    postJson(`${gw.url}/v1/approvals/payments/${tenant}/${p.approval_id}/decision`, { decision }, headers);
  /** The latest audit record of the held action: the decision's. */
  const trailOf = async (p: Pending) => (await requestJson('GET', `${gw.url}/v1/audit/${p.action_id}`, undefined, admin)).body;
  const executed = (p: Pending) => sink.received.filter((c) => c.id === p.action_id).length;

  beforeAll(async () => {
    sink = await startSink();
    const { file } = credentialsFile({
      keys: [
        { name: 'admin', role: 'admin', grants: [WILDCARD_GRANT] },
        { name: 'viewer', role: 'viewer', grants: [WILDCARD_GRANT] },
        // An operator of acme who may use the `hook` provider only.
        { name: 'hook-operator', role: 'operator', grants: [{ tenants: ['acme'], namespaces: ['*'], providers: ['hook'], actions: ['*'] }] },
      ],
    });
    gw = await startGateway(
      backend,
      {
        auth: { enabled: true, file },
        providers: [
          { name: 'hook', type: 'webhook', url: sink.url },
          { name: 'other', type: 'webhook', url: sink.url },
        ],
        rules: { directory: rulesDir({ 'approvals.yaml': RULES }) },
      },
      { clock },
    );
  });
  afterAll(async () => {
    await gw.close();
    await sink.close();
  });

  it('shows a held action only to callers whose grants cover its provider too (list and by id)', async () => {
    const mine = await request('acme', 'hook');
    const other = await request('acme', 'other');
    const listed = async (headers: Record<string, string>) => {
      const res = await requestJson('GET', `${gw.url}/v1/approvals?namespace=payments&tenant=acme`, undefined, headers);
      return ((res.body?.approvals as { id: string }[] | undefined) ?? []).map((a) => a.id);
    };
    const op = keyHeader('hook-operator');
    expect(await listed(op)).toContain(mine.approval_id);
    expect(await listed(op)).not.toContain(other.approval_id);
    expect(await listed(admin)).toEqual(expect.arrayContaining([mine.approval_id, other.approval_id]));
    const byId = (p: Pending) => requestJson('GET', `${gw.url}/v1/approvals/payments/acme/${p.approval_id}`, undefined, op);
    expect((await byId(mine)).status).toBe(200);
    expect(await byId(other)).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
  });

  it('GET /v1/auth/me names the caller, its role, grants and permissions; no credential is 401', async () => {
    const me = await requestJson('GET', `${gw.url}/v1/auth/me`, undefined, keyHeader('viewer'));
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      id: 'viewer',
      role: 'viewer',
      method: 'api_key',
      grants: [{ ...WILDCARD_GRANT, providers: ['*'] }],
      permissions: ['stream_subscribe', 'read'],
    });
    const op = await requestJson('GET', `${gw.url}/v1/auth/me`, undefined, keyHeader('hook-operator'));
    expect(op.body?.['permissions']).toContain('dispatch');
    expect(op.body?.['permissions']).not.toContain('admin');
    expect((await requestJson('GET', `${gw.url}/v1/auth/me`)).status).toBe(401);
  });

  it('approves as the caller: the action executes once, the record names the caller, a second decision is 410', async () => {
    const pending = await request();
    expect(pending.outcome).toBe('pending_approval');
    const res = await decide(pending, 'approve', keyHeader('hook-operator'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: pending.approval_id, status: 'approved', outcome: { outcome: 'executed' } });
    expect(executed(pending)).toBe(1);
    const record = await requestJson('GET', `${gw.url}/v1/approvals/payments/acme/${pending.approval_id}`, undefined, admin);
    expect(record.body).toMatchObject({ status: 'approved', decided_by: 'caller:hook-operator' });
    expect(await trailOf(pending)).toMatchObject({ outcome: 'executed', caller_id: 'caller:hook-operator', auth_method: 'api_key' });
    const again = await decide(pending, 'reject');
    expect(again.status).toBe(410);
    expect(executed(pending)).toBe(1);
  });

  it('rejects as the caller: nothing executes', async () => {
    const pending = await request();
    const res = await decide(pending, 'reject');
    expect(res.body).toMatchObject({ status: 'rejected', outcome: null });
    expect(executed(pending)).toBe(0);
    // Recorded as the caller signed in (an API key here), as an approval's execution is: not as a link.
    expect(await trailOf(pending)).toMatchObject({ outcome: 'suppressed', caller_id: 'caller:admin', auth_method: 'api_key' });
  });

  it('refuses a viewer (403) or an operator whose grant misses the tenant (403); to one missing the provider the approval is unknown (404, as GET answers); nothing changes', async () => {
    const pending = await request();
    expect((await decide(pending, 'approve', keyHeader('viewer'))).status).toBe(403);
    const otherProvider = await request('acme', 'other');
    const refused = await decide(otherProvider, 'approve', keyHeader('hook-operator'));
    expect(refused).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    expect(refused.body?.['error']).not.toMatch(/other/);
    const otherTenant = await request('globex');
    expect((await decide(otherTenant, 'approve', keyHeader('hook-operator'), 'globex')).status).toBe(403);
    for (const p of [pending, otherProvider]) {
      const record = await requestJson('GET', `${gw.url}/v1/approvals/payments/acme/${p.approval_id}`, undefined, admin);
      expect(record.body?.['status']).toBe('pending');
      expect(executed(p)).toBe(0);
    }
  });

  it('answers 400 to a bad decision and 404 to an unknown approval, changing nothing', async () => {
    const pending = await request();
    for (const bad of ['maybe', undefined, 1]) {
      const res = await decide(pending, bad);
      expect(res.status).toBe(400);
      expect(res.body?.['code']).toBe('VALIDATION_FAILED');
    }
    expect((await decide({ ...pending, approval_id: 'no-such-approval' }, 'approve')).status).toBe(404);
    const record = await requestJson('GET', `${gw.url}/v1/approvals/payments/acme/${pending.approval_id}`, undefined, admin);
    expect(record.body?.['status']).toBe('pending');
  });

  it('refuses (404) an approval past its expires_at even while its record still reads pending, executing nothing', async () => {
    const pending = await request();
    clock.advance(3601_000);
    const res = await decide(pending, 'approve');
    expect(res.status).toBe(404);
    expect(executed(pending)).toBe(0);
  });
});
