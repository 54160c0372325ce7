import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, startGateway, type RunningGateway, requestJson } from '../support/start-gateway.js';

const CONFIG_POLICY = { id: 'from-config', namespace: 'payments', tenant: 'acme', max_actions: 100, window: 'daily', description: 'set by ops' };

type Json = Record<string, unknown>;

describe.each(BACKENDS)('quota endpoints (%s backend)', (backend) => {
  let gw: RunningGateway;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await requestJson(method, `${gw.url}${path}`, body);
    return { status: res.status, body: res.body as Json };
  };

  beforeAll(async () => {
    gw = await startGateway(backend, { quotas: { policies: [CONFIG_POLICY] } });
  });
  afterAll(() => gw.close());

  it('lists config policies as read-only entries', async () => {
    const { status, body } = await call('GET', '/v1/quotas');
    expect(status).toBe(200);
    expect(body).toEqual({
      quotas: [{ ...CONFIG_POLICY, overage_behavior: 'block', enabled: true, source: 'config' }],
      count: 1,
    });
    expect((await call('GET', '/v1/quotas/from-config')).body).toMatchObject({ id: 'from-config', source: 'config' });
  });

  it('creates, reads, updates and deletes an API policy', async () => {
    const created = await call('POST', '/v1/quotas', {
      id: 'crud',
      namespace: 'payments',
      tenant: 'crud',
      max_actions: 10,
      window: 'hourly',
      overage_behavior: 'warn',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: 'crud',
      namespace: 'payments',
      tenant: 'crud',
      max_actions: 10,
      window: 'hourly',
      overage_behavior: 'warn',
      enabled: true,
      source: 'api',
    });
    expect(created.body.created_at).toEqual(created.body.updated_at);
    expect((await call('GET', '/v1/quotas/crud')).body).toEqual(created.body);

    const updated = await call('PUT', '/v1/quotas/crud', { max_actions: 20, window: 'daily', enabled: false, description: 'bigger' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      id: 'crud',
      tenant: 'crud',
      max_actions: 20,
      window: 'daily',
      overage_behavior: 'warn',
      enabled: false,
      description: 'bigger',
    });
    expect((await call('GET', '/v1/quotas/crud')).body).toEqual(updated.body);

    expect((await call('DELETE', '/v1/quotas/crud')).status).toBe(204);
    expect(await call('GET', '/v1/quotas/crud')).toEqual({ status: 404, body: { error: 'quota policy not found: crud', code: 'NOT_FOUND' } });
    expect((await call('DELETE', '/v1/quotas/crud')).status).toBe(404);
  });

  it('generates an id when none is given, and filters and pages the list', async () => {
    const created = await call('POST', '/v1/quotas', { namespace: 'list', tenant: 'one', max_actions: 1, window: 'weekly' });
    expect(created.body.id).toMatch(/^[0-9a-f-]{36}$/);
    await call('POST', '/v1/quotas', { id: 'list-2', namespace: 'list', tenant: 'two', max_actions: 1, window: 'monthly' });
    await call('POST', '/v1/quotas', { id: 'list-any', namespace: 'list', tenant: '*', max_actions: 1, window: 'monthly' });
    const all = await call('GET', '/v1/quotas?namespace=list');
    expect(all.body.count).toBe(3);
    expect((all.body.quotas as Json[]).map((q) => q.tenant)).toEqual(['*', 'one', 'two']);
    expect((await call('GET', '/v1/quotas?namespace=list&tenant=two')).body).toMatchObject({ count: 1, quotas: [{ id: 'list-2' }] });
    const page = await call('GET', '/v1/quotas?namespace=list&limit=1&offset=1');
    expect(page.body).toMatchObject({ count: 3, quotas: [{ tenant: 'one' }] });
  });

  it('reports usage, naming the tenant for a * policy', async () => {
    const usage = await call('GET', '/v1/quotas/from-config/usage');
    expect(usage.status).toBe(200);
    expect(usage.body).toEqual({
      id: 'from-config',
      namespace: 'payments',
      tenant: 'acme',
      used: 0,
      limit: 100,
      remaining: 100,
      window: 'daily',
      resets_at: expect.stringMatching(/T00:00:00\.000Z$/),
      overage_behavior: 'block',
    });
    expect((await call('GET', '/v1/quotas/list-any/usage?tenant=someone')).body).toMatchObject({ namespace: 'list', tenant: 'someone', used: 0 });
    expect(await call('GET', '/v1/quotas/list-any/usage')).toMatchObject({ status: 400, body: { code: 'BAD_REQUEST' } });
    expect((await call('GET', '/v1/quotas/nope/usage')).status).toBe(404);
  });

  it('answers 409 for a taken id or (namespace, tenant) pair', async () => {
    await call('POST', '/v1/quotas', { id: 'dup', namespace: 'dup', tenant: 't', max_actions: 1, window: 'hourly' });
    const sameId = await call('POST', '/v1/quotas', { id: 'dup', namespace: 'dup', tenant: 'u', max_actions: 1, window: 'hourly' });
    expect(sameId).toEqual({ status: 409, body: { error: 'quota policy already exists: dup', code: 'CONFLICT' } });
    expect((await call('POST', '/v1/quotas', { id: 'dup2', namespace: 'dup', tenant: 't', max_actions: 1, window: 'daily' })).status).toBe(409);
    expect((await call('POST', '/v1/quotas', { namespace: 'payments', tenant: 'acme', max_actions: 1, window: 'daily' })).status).toBe(409);
    expect((await call('POST', '/v1/quotas', { id: 'from-config', namespace: 'x', tenant: 'y', max_actions: 1, window: 'daily' })).status).toBe(409);
  });

  it('refuses to change or delete a config policy (409)', async () => {
    expect(await call('PUT', '/v1/quotas/from-config', { max_actions: 1 })).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
    expect((await call('DELETE', '/v1/quotas/from-config')).status).toBe(409);
    expect((await call('GET', '/v1/quotas/from-config')).body).toMatchObject({ max_actions: 100 });
  });

  it('validates bodies and queries (400 naming the field)', async () => {
    const bad = async (body: unknown) => (await call('POST', '/v1/quotas', body)).body;
    expect(await bad({ namespace: 'a', tenant: 'b', max_actions: 0, window: 'daily' })).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ path: 'max_actions' }],
    });
    expect(await bad({ namespace: 'a', tenant: 'b', max_actions: 1, window: 'yearly' })).toMatchObject({ details: [{ path: 'window' }] });
    expect(await bad({ namespace: 'a', tenant: 'b', max_actions: 1, window: 'daily', overage_behavior: 'degrade' })).toMatchObject({
      details: [{ path: 'overage_behavior' }],
    });
    expect(await bad({ tenant: 'b', max_actions: 1, window: 'daily' })).toMatchObject({ details: [{ path: 'namespace' }] });
    expect(await bad({ namespace: 'a', tenant: 'b', max_actions: 1, window: 'daily', provider: 'email' })).toMatchObject({ details: [{ path: 'provider' }] });
    const put = await call('PUT', '/v1/quotas/from-config', { namespace: 'moved' });
    expect(put).toMatchObject({ status: 400, body: { details: [{ path: 'namespace' }] } });
    expect((await call('PUT', '/v1/quotas/nope', { max_actions: 1 })).status).toBe(404);
    expect((await call('GET', '/v1/quotas?limit=0')).body).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'querystring.limit' }] });
  });

  it('documents the endpoints in the OpenAPI document', async () => {
    const doc = (await call('GET', '/api-doc/openapi.json')).body as { paths: Json; tags: { name: string }[] };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/quotas', '/v1/quotas/{id}', '/v1/quotas/{id}/usage']));
    expect(doc.tags.map((t) => t.name)).toContain('quotas');
  });
});
