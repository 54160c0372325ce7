import type { ReapContext, ReapResult, RetentionSource } from '@sluice/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, WILDCARD_GRANT, type TestKey } from '../support/credentials.js';
import { poll } from '../support/poll.js';
import { uniquePrefix } from '../support/redis-url.js';
import { BACKENDS, startGateway, type RunningGateway, requestJson } from '../support/start-gateway.js';

type Json = Record<string, unknown>;

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await requestJson(method, `${base}${path}`, body, headers);
  return { status: res.status, body: res.body as Json };
}

/** A reapable source that only records which policies a cycle handed it. */
class RecordingSource implements RetentionSource {
  readonly seen: ReapContext[] = [];
  constructor(readonly name: string) {}
  async reap(ctx: ReapContext): Promise<ReapResult> {
    this.seen.push(ctx);
    return { deleted: 1, skippedCompliance: 0, errors: 0 };
  }
}

const NO_REAPER = { background: { enable_retention_reaper: false } };

describe.each(BACKENDS)('retention endpoints (%s backend)', (backend) => {
  let gw: RunningGateway;
  const api = (method: string, path: string, body?: unknown) => call(gw.url, method, path, body);

  beforeAll(async () => {
    gw = await startGateway(backend, NO_REAPER);
  });
  afterAll(() => gw.close());

  it('creates, reads, updates and deletes a policy', async () => {
    const created = await api('POST', '/v1/retention', {
      namespace: 'payments',
      tenant: 'crud',
      audit_ttl_seconds: 86_400,
      state_ttl_seconds: 3600,
      description: 'one day of audit',
      labels: { team: 'billing' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      namespace: 'payments',
      tenant: 'crud',
      enabled: true,
      audit_ttl_seconds: 86_400,
      state_ttl_seconds: 3600,
      compliance_hold: false,
      created_at: expect.any(String),
      updated_at: created.body.created_at,
      description: 'one day of audit',
      labels: { team: 'billing' },
    });
    const id = created.body.id as string;
    expect(await api('GET', `/v1/retention/${id}`)).toEqual({ status: 200, body: created.body });

    const updated = await api('PUT', `/v1/retention/${id}`, { enabled: false, compliance_hold: true, event_ttl_seconds: 60, description: null });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      id,
      tenant: 'crud',
      enabled: false,
      compliance_hold: true,
      audit_ttl_seconds: 86_400,
      state_ttl_seconds: 3600,
      event_ttl_seconds: 60,
    });
    expect(updated.body).not.toHaveProperty('description');
    expect((await api('GET', `/v1/retention/${id}`)).body).toEqual(updated.body);

    expect(await api('DELETE', `/v1/retention/${id}`)).toEqual({ status: 204, body: null });
    expect(await api('GET', `/v1/retention/${id}`)).toEqual({ status: 404, body: { error: `retention policy not found: ${id}`, code: 'NOT_FOUND' } });
    expect((await api('PUT', `/v1/retention/${id}`, { enabled: true })).status).toBe(404);
    expect((await api('DELETE', `/v1/retention/${id}`)).status).toBe(404);
    // The pair is free again: the tenant reverted to the gateway defaults.
    expect((await api('POST', '/v1/retention', { namespace: 'payments', tenant: 'crud' })).status).toBe(201);
  });

  it('answers 409 for a second policy on a (namespace, tenant) pair', async () => {
    expect((await api('POST', '/v1/retention', { namespace: 'dup', tenant: 't' })).status).toBe(201);
    expect(await api('POST', '/v1/retention', { namespace: 'dup', tenant: 't', compliance_hold: true })).toEqual({
      status: 409,
      body: { error: 'a retention policy already exists for namespace=dup tenant=t', code: 'CONFLICT' },
    });
    expect((await api('POST', '/v1/retention', { namespace: 'dup', tenant: 't.child' })).status).toBe(201);
  });

  it('lists {policies, count}: filtered, paged (default limit 100), entries without state/event TTL, description, labels', async () => {
    for (const tenant of ['c', 'a', 'b']) {
      const res = await api('POST', '/v1/retention', {
        namespace: 'list',
        tenant,
        audit_ttl_seconds: 10,
        state_ttl_seconds: 20,
        event_ttl_seconds: 30,
        description: 'd',
        labels: { k: 'v' },
      });
      expect(res.status).toBe(201);
    }
    const all = await api('GET', '/v1/retention?namespace=list');
    expect(all.status).toBe(200);
    expect(all.body.count).toBe(3);
    const policies = all.body.policies as Json[];
    expect(policies.map((p) => p.tenant)).toEqual(['a', 'b', 'c']);
    expect(Object.keys(policies[0] ?? {}).sort()).toEqual([
      'audit_ttl_seconds',
      'compliance_hold',
      'created_at',
      'enabled',
      'id',
      'namespace',
      'tenant',
      'updated_at',
    ]);
    expect(await api('GET', '/v1/retention?namespace=list&tenant=b')).toMatchObject({ body: { count: 1, policies: [{ tenant: 'b' }] } });
    expect((await api('GET', '/v1/retention?namespace=list&limit=1&offset=1')).body).toMatchObject({ count: 3, policies: [{ tenant: 'b' }] });
    for (let i = 0; i < 101; i++)
      expect((await api('POST', '/v1/retention', { namespace: 'many', tenant: `t${String(i).padStart(3, '0')}` })).status).toBe(201);
    const page = await api('GET', '/v1/retention?namespace=many');
    expect(page.body.count).toBe(101);
    expect(page.body.policies).toHaveLength(100);
  });

  it('validates bodies and queries (400 naming the field)', async () => {
    const bad = async (body: unknown) => (await api('POST', '/v1/retention', body)).body;
    // Nullable fields fail both branches of their anyOf: the details name the field more than once.
    const about = (path: string) => ({ code: 'VALIDATION_FAILED', details: expect.arrayContaining([expect.objectContaining({ path })]) });
    expect(await bad({ tenant: 't' })).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'namespace' }] });
    expect(await bad({ namespace: 'v', tenant: 't', audit_ttl_seconds: 0 })).toMatchObject(about('audit_ttl_seconds'));
    expect(await bad({ namespace: 'v', tenant: 't', state_ttl_seconds: 1.5 })).toMatchObject(about('state_ttl_seconds'));
    expect(await bad({ namespace: 'v', tenant: 't', compliance_hold: 'yes' })).toMatchObject({ details: [{ path: 'compliance_hold' }] });
    expect(await bad({ namespace: 'v', tenant: 't', labels: { k: 1 } })).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(await bad({ namespace: 'v', tenant: 't', id: 'mine' })).toMatchObject({ details: [{ path: 'id' }] });
    expect(await bad({ namespace: 'v', tenant: '*' })).toMatchObject({ code: 'BAD_REQUEST' });
    const created = await api('POST', '/v1/retention', { namespace: 'v', tenant: 't' });
    const put = await api('PUT', `/v1/retention/${created.body.id as string}`, { tenant: 'moved' });
    expect(put).toMatchObject({ status: 400, body: { details: [{ path: 'tenant' }] } });
    expect((await api('GET', '/v1/retention?limit=0')).body).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'querystring.limit' }] });
  });

  it('documents the endpoints in the OpenAPI document', async () => {
    const doc = (await api('GET', '/api-doc/openapi.json')).body as { paths: Json };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/retention', '/v1/retention/{id}']));
  });

  it('a reaper cycle skips disabled and held policies, runs sources for the rest, and moves the counters', async () => {
    const source = new RecordingSource(`chains-${backend}`);
    gw.runtime.reaper.register(source);
    const create = async (tenant: string, extra: Json = {}) =>
      (await api('POST', '/v1/retention', { namespace: 'reap', tenant, state_ttl_seconds: 60, ...extra })).body.id as string;
    await create('active');
    await create('held', { compliance_hold: true });
    await api('PUT', `/v1/retention/${await create('off')}`, { enabled: false });

    const summary = await gw.runtime.reaper.runCycle();
    expect(source.seen.filter((c) => c.policy.namespace === 'reap').map((c) => c.policy.tenant)).toEqual(['active']);
    expect(summary.skippedCompliance).toBeGreaterThanOrEqual(1);
    expect(gw.runtime.metrics.retentionSnapshot().retention_skipped_compliance).toBeGreaterThanOrEqual(1);
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    expect(text).toMatch(new RegExp(`sluice_retention_deleted_state_total\\{source="chains-${backend}"\\} [1-9]`));
    expect(text).toMatch(/sluice_retention_skipped_compliance_total\{source="policies"\} [1-9]/);
    expect(text).toMatch(/sluice_retention_errors_total\{source="audit"\} 0/);
  });
});

describe('retention roles and grants', () => {
  const CALLERS: TestKey[] = [
    { name: 'root', role: 'admin', grants: [WILDCARD_GRANT] },
    { name: 'acme-admin', role: 'admin', grants: [{ tenants: ['acme'], namespaces: ['payments'], actions: ['*'] }] },
    { name: 'acme-op', role: 'operator', grants: [{ tenants: ['acme'], namespaces: ['payments'], actions: ['*'] }] },
    { name: 'acme-viewer', role: 'viewer', grants: [{ tenants: ['acme'], namespaces: ['payments'], actions: ['*'] }] },
  ];
  let gw: RunningGateway;
  let globexId: string;
  let acmeId: string;
  const as = (caller: string, method: string, path: string, body?: unknown) => call(gw.url, method, path, body, keyHeader(caller));

  beforeAll(async () => {
    const { file } = credentialsFile({ keys: CALLERS });
    gw = await startGateway('memory', { ...NO_REAPER, auth: { enabled: true, file } });
    acmeId = (await as('root', 'POST', '/v1/retention', { namespace: 'payments', tenant: 'acme' })).body.id as string;
    globexId = (await as('root', 'POST', '/v1/retention', { namespace: 'payments', tenant: 'globex' })).body.id as string;
  });
  afterAll(() => gw.close());

  it('needs credentials', async () => {
    expect((await call(gw.url, 'GET', '/v1/retention')).status).toBe(401);
  });

  it('writes need the admin role; reads do not', async () => {
    expect((await as('acme-op', 'POST', '/v1/retention', { namespace: 'payments', tenant: 'acme.eu' })).status).toBe(403);
    expect((await as('acme-viewer', 'PUT', `/v1/retention/${acmeId}`, { compliance_hold: true })).status).toBe(403);
    expect((await as('acme-op', 'DELETE', `/v1/retention/${acmeId}`)).status).toBe(403);
    expect((await as('acme-viewer', 'GET', `/v1/retention/${acmeId}`)).status).toBe(200);
    expect((await as('acme-op', 'GET', '/v1/retention')).status).toBe(200);
  });

  it("an admin's grants bound what it may create, see and change", async () => {
    expect((await as('acme-admin', 'POST', '/v1/retention', { namespace: 'payments', tenant: 'acme.eu' })).status).toBe(201);
    expect((await as('acme-admin', 'POST', '/v1/retention', { namespace: 'payments', tenant: 'initech' })).status).toBe(403);
    expect((await as('acme-admin', 'POST', '/v1/retention', { namespace: 'billing', tenant: 'acme' })).status).toBe(403);
    expect((await as('acme-admin', 'GET', `/v1/retention/${globexId}`)).status).toBe(404);
    expect((await as('acme-admin', 'PUT', `/v1/retention/${globexId}`, { compliance_hold: true })).status).toBe(404);
    expect((await as('acme-admin', 'DELETE', `/v1/retention/${globexId}`)).status).toBe(404);
    expect((await as('acme-admin', 'PUT', `/v1/retention/${acmeId}`, { compliance_hold: true })).body).toMatchObject({ compliance_hold: true });
    const listed = await as('acme-viewer', 'GET', '/v1/retention');
    expect((listed.body.policies as Json[]).map((p) => p.tenant).sort()).toEqual(['acme', 'acme.eu']);
    expect((await as('acme-viewer', 'GET', '/v1/retention?tenant=globex')).status).toBe(403);
  });
});

describe('retention across two replicas sharing Redis', () => {
  const prefix = uniquePrefix();
  let a: RunningGateway;
  let b: RunningGateway;

  beforeAll(async () => {
    // Reaper on, every second: both replicas run a worker and declare the same schedule.
    const config = { state: { prefix }, background: { enable_retention_reaper: true, retention_check_interval_seconds: 1 } };
    [a, b] = await Promise.all([startGateway('redis', config), startGateway('redis', config)]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it('two concurrent creates of one pair on two replicas give exactly one 201 and one 409', async () => {
    for (let round = 0; round < 5; round++) {
      const body = { namespace: 'race', tenant: `t${round}` };
      const results = await Promise.all([call(a.url, 'POST', '/v1/retention', body), call(b.url, 'POST', '/v1/retention', body)]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    }
    // Reads come from each replica's snapshot, which follows the other's writes within milliseconds (pub/sub).
    for (const replica of [a, b]) await expect.poll(async () => (await call(replica.url, 'GET', '/v1/retention?namespace=race')).body.count).toBe(5);
  });

  it('an edit on one replica applies on the other within a second', async () => {
    const created = await call(a.url, 'POST', '/v1/retention', { namespace: 'sync', tenant: 't' });
    const id = created.body.id as string;
    // The staleness bound under test: the other replica follows within a second.
    const within = (what: string, check: () => boolean) => poll(what, check, { timeoutMs: 1000 });
    await within('the create on replica b', () => b.runtime.retention.forScope('sync', 't')?.id === id);
    await call(b.url, 'PUT', `/v1/retention/${id}`, { compliance_hold: true });
    await within('the edit on replica a', () => a.runtime.retention.forScope('sync', 't')?.compliance_hold === true);
    await call(a.url, 'DELETE', `/v1/retention/${id}`);
    await within('the delete on replica b', () => b.runtime.retention.forScope('sync', 't') === undefined);
  });

  it('each scheduled reaper cycle runs on one worker only', async () => {
    const [onA, onB] = [new RecordingSource('cluster-a'), new RecordingSource('cluster-b')];
    a.runtime.reaper.register(onA);
    b.runtime.reaper.register(onB);
    await call(a.url, 'POST', '/v1/retention', { namespace: 'cycles', tenant: 't', state_ttl_seconds: 60 });
    const cycleTimes = () =>
      [...onA.seen, ...onB.seen]
        .filter((c) => c.policy.namespace === 'cycles')
        .map((c) => c.nowMs)
        .sort((x, y) => x - y);
    const times = await poll('four reaper cycles', cycleTimes, (t) => t.length >= 4, { timeoutMs: 15_000, intervalMs: 50 });
    // One job per 1 s slot puts consecutive cycles about a second apart, whichever worker ran them
    // (timer latency aside: a late cycle can be followed closely by an on-time one). A slot run by
    // both workers would give two cycles a few milliseconds apart; each worker on a schedule of its
    // own would fit four cycles in about two slots.
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(Math.min(...gaps), `gaps between cycles: ${gaps.join(', ')} ms`).toBeGreaterThanOrEqual(50);
    expect(times[3]! - times[0]!).toBeGreaterThanOrEqual(2000);
  });
});
