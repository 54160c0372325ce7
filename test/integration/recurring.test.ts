import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, WILDCARD_GRANT, type TestKey } from '../support/credentials.js';
import { poll } from '../support/poll.js';
import { BACKENDS, startGateway, type RunningGateway, requestJson } from '../support/start-gateway.js';

type Json = Record<string, unknown>;

// Test mode: 6-field (seconds) cron, so occurrences can be watched in a few seconds. Read when the runtime is built.
process.env.SLUICE_TEST_SECONDS_CRON = '1';

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await requestJson(method, `${base}${path}`, body, headers);
  return { status: res.status, body: res.body as Json };
}

/** Polls over HTTP, as the hand-made loop here did: every 100 ms, for up to 15 s. */
const POLL = { timeoutMs: 15_000, intervalMs: 100 };

const template = { provider: 'email', action_type: 'send', payload: { to: 'a@example.com' } };
const Q = '?namespace=payments&tenant=acme';

describe.each(BACKENDS)('recurring actions over HTTP (%s backend)', (backend) => {
  let gw: RunningGateway;
  const api = (method: string, path: string, body?: unknown) => call(gw.url, method, path, body);

  beforeAll(async () => {
    gw = await startGateway(backend, { background: { enable_retention_reaper: false, max_recurring_actions_per_tenant: 3 } });
  });
  afterAll(() => gw.close());

  it('creates (201, the spec shape), reads, lists, updates and deletes', async () => {
    const created = await api('POST', '/v1/recurring', {
      namespace: 'payments',
      tenant: 'acme',
      cron_expr: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
      ...template,
      description: 'weekday digest',
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      recurring_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      next_execution: expect.stringMatching(/^\d{4}-\d\d-\d\dT0[78]:00:00\.000Z$/), // 09:00 Berlin is 07:00 or 08:00 UTC
      cron_expr: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
      enabled: true,
    });
    const id = created.body.recurring_id as string;

    const one = await api('GET', `/v1/recurring/${id}${Q}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      id,
      namespace: 'payments',
      tenant: 'acme',
      cron_expr: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
      enabled: true,
      ...template,
      metadata: {},
      next_execution: created.body.next_execution,
      last_executed_at: null,
      execution_count: 0,
      description: 'weekday digest',
    });

    const listed = await api('GET', `/v1/recurring${Q}`);
    expect(listed.status).toBe(200);
    expect(listed.body.count).toBe(1);
    expect((listed.body.recurring_actions as Json[])[0]).toMatchObject({ id, enabled: true, execution_count: 0 });

    const updated = await api('PUT', `/v1/recurring/${id}${Q}`, { cron_expr: '30 6 * * *', timezone: 'UTC', max_executions: 10, description: null });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      cron_expr: '30 6 * * *',
      timezone: 'UTC',
      max_executions: 10,
      next_execution: expect.stringMatching(/T06:30:00\.000Z$/),
    });
    expect(updated.body).not.toHaveProperty('description');
    // The reference SDKs put the scope in the PUT body.
    expect((await api('PUT', `/v1/recurring/${id}`, { namespace: 'payments', tenant: 'acme', name: 'digest' })).body).toMatchObject({ name: 'digest' });

    expect((await api('DELETE', `/v1/recurring/${id}${Q}`)).status).toBe(204);
    const gone = await api('GET', `/v1/recurring/${id}${Q}`);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ error: `recurring action not found: ${id}`, code: 'NOT_FOUND' });
    expect((await api('DELETE', `/v1/recurring/${id}${Q}`)).status).toBe(404);
  });

  it('400 for an invalid cron, an invalid time zone and missing fields', async () => {
    const base = { namespace: 'payments', tenant: 'acme', cron_expr: '*/5 * * * *', ...template };
    const bad = async (body: Json, query = '') => {
      const res = await api('POST', `/v1/recurring${query}`, body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      return res.body.error as string;
    };
    expect(await bad({ ...base, cron_expr: 'every five minutes' })).toMatch(/^invalid cron expression "every five minutes"/);
    expect(await bad({ ...base, cron_expr: '99 * * * *' })).toMatch(/^invalid cron expression/);
    for (const cron_expr of ['H * * * *', '0 H/2 * * *', '0 0 H(1-7) * *']) expect(await bad({ ...base, cron_expr })).toMatch(/H \(a random value\)/);
    expect(await bad({ ...base, timezone: 'Atlantis/Capital' })).toBe('invalid timezone "Atlantis/Capital": not an IANA time zone name');
    expect(await bad({ ...base, cron_expr: undefined })).toBe('cron_expr is required');
    expect(await bad({ ...base, provider: undefined })).toMatch(/provider/);
    expect(await bad({ ...base, payload: undefined })).toMatch(/payload/);
    expect(await bad({ ...base, namespace: undefined })).toBe('namespace and tenant are required (query or body)');
    expect(await bad({ ...base, max_executions: 0 })).toMatch(/max_executions/);
    // A nullable field says what its value missed, not what every branch of its schema wanted.
    expect(await bad({ ...base, max_executions: 10_000_001 })).toBe('request validation failed: max_executions must be <= 10000000');
    expect(await bad({ ...base, max_executions: 'ten' })).toBe('request validation failed: max_executions must be integer or null');
    expect(await bad({ ...base, end_date: 'tomorrow' })).toMatch(/end_date/);
    expect(await bad({ ...base, unknown_field: 1 })).toMatch(/unknown_field/);
    expect(await bad(base, '?tenant=globex')).toMatch(/disagree/);
    // The scope in the query and the reference spelling of the cron field are accepted.
    const viaQuery = await api('POST', `/v1/recurring${Q}`, { cron_expression: '0 0 * * *', ...template });
    expect(viaQuery.status).toBe(201);
    await api('DELETE', `/v1/recurring/${viaQuery.body.recurring_id as string}${Q}`);
  });

  it('pauses and resumes (query or body scope), 409 on a double pause or resume', async () => {
    const created = await api('POST', `/v1/recurring${Q}`, { cron_expr: '*/5 * * * *', ...template });
    const id = created.body.recurring_id as string;
    const paused = await api('POST', `/v1/recurring/${id}/pause${Q}`);
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ id, enabled: false, next_execution: null });
    const again = await api('POST', `/v1/recurring/${id}/pause${Q}`);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: 'recurring action is already paused', code: 'CONFLICT' });
    expect((await api('GET', `/v1/recurring${Q}&enabled=false`)).body.count).toBe(1);
    expect((await api('GET', `/v1/recurring${Q}&status=active`)).body.count).toBe(0);

    const resumed = await api('POST', `/v1/recurring/${id}/resume`, { namespace: 'payments', tenant: 'acme' });
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ enabled: true, next_execution: expect.stringMatching(/:[0-5][05]:00\.000Z$/) });
    const twice = await api('POST', `/v1/recurring/${id}/resume${Q}`);
    expect(twice.status).toBe(409);
    expect(twice.body.error).toBe('recurring action is already active');
    expect((await api('POST', `/v1/recurring/nope/pause${Q}`)).status).toBe(404);
    expect((await api('POST', `/v1/recurring/${id}/pause`)).status).toBe(400);
    await api('DELETE', `/v1/recurring/${id}${Q}`);
  });

  it('refuses a create beyond the per-tenant maximum (409); another tenant is unaffected', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await api('POST', `/v1/recurring${Q}`, { cron_expr: '0 0 * * *', ...template })).body.recurring_id as string);
    const over = await api('POST', `/v1/recurring${Q}`, { cron_expr: '0 0 * * *', ...template });
    expect(over.status).toBe(409);
    expect(over.body.error).toMatch(/maximum of 3 recurring actions/);
    expect((await api('POST', '/v1/recurring?namespace=payments&tenant=globex', { cron_expr: '0 0 * * *', ...template })).status).toBe(201);
    for (const id of ids) await api('DELETE', `/v1/recurring/${id}${Q}`);
  });

  it('fires each occurrence through the pipeline once (test-mode seconds cron), and stops when paused', async () => {
    // Listening before the create: the first occurrence may fire before the create's response is read.
    const fires: Json[] = [];
    const off = gw.runtime.events.on((e) => {
      if (e.type === 'recurring_fired') fires.push(e.data);
    });
    const created = await api('POST', '/v1/recurring?namespace=payments&tenant=firing', {
      cron_expr: '* * * * * *',
      ...template,
      metadata: { labels: { kind: 'tick' } },
    });
    expect(created.status).toBe(201);
    const id = created.body.recurring_id as string;
    const path = `/v1/recurring/${id}?namespace=payments&tenant=firing`;
    const firesOfThis = () => fires.filter((f) => f.recurring_id === id).length;
    const fired = await poll(
      'three executions',
      async () => (await api('GET', path)).body,
      (r) => (r.execution_count as number) >= 3,
      POLL,
    );
    expect(fired.execution_count).toBeGreaterThanOrEqual(3);
    const paused = await api('POST', `/v1/recurring/${id}/pause?namespace=payments&tenant=firing`);
    const count = paused.body.execution_count as number;
    // An execution's event follows its count update: under load the last one may not be out yet.
    await poll(`${count} fired events`, firesOfThis, (n) => n >= count, POLL);
    off();

    // Every execution is one executed audit record by the internal caller, one per occurrence.
    const audit = await poll(
      `${count} audit records`,
      async () => (await api('GET', `/v1/audit?caller_id=${encodeURIComponent(`recurring:${id}`)}&limit=1000`)).body.records as Json[],
      (records) => records.length >= count,
      POLL,
    );
    expect(audit).toHaveLength(count);
    expect(audit.every((r) => r.outcome === 'executed' && r.namespace === 'payments' && r.tenant === 'firing')).toBe(true);
    const occurrences = audit.map((r) => ((r.metadata as Json | undefined)?.recurring_occurrence ?? r.action_id) as string);
    expect(new Set(occurrences).size).toBe(count);
    expect(new Set(audit.map((r) => r.action_id)).size).toBe(count);
    expect(firesOfThis()).toBe(count);

    // Paused: nothing more fires. A schedule created after the pause firing twice means at least
    // one whole slot passed with the scheduler firing; the paused one would have fired in it too.
    const after = await api('POST', '/v1/recurring?namespace=payments&tenant=firing-after', { cron_expr: '* * * * * *', ...template });
    const afterPath = `/v1/recurring/${after.body.recurring_id as string}?namespace=payments&tenant=firing-after`;
    await poll(
      'two executions of a schedule created after the pause',
      async () => (await api('GET', afterPath)).body,
      (r) => (r.execution_count as number) >= 2,
      POLL,
    );
    await api('DELETE', afterPath);
    const later = (await api('GET', path)).body;
    expect(later.execution_count).toBe(count);
    expect(later).toMatchObject({ enabled: false, next_execution: null, last_executed_at: expect.any(String) });
  });

  it('documents the routes in the OpenAPI description', async () => {
    const doc = (await api('GET', '/api-doc/openapi.json')).body as { paths: Json };
    for (const p of ['/v1/recurring', '/v1/recurring/{id}', '/v1/recurring/{id}/pause', '/v1/recurring/{id}/resume']) expect(doc.paths).toHaveProperty([p]);
  });
});

describe('recurring roles and grants', () => {
  const CALLERS: TestKey[] = [
    { name: 'root', role: 'admin', grants: [WILDCARD_GRANT] },
    { name: 'acme-op', role: 'operator', grants: [{ tenants: ['acme'], namespaces: ['payments'], providers: ['email'], actions: ['send'] }] },
    { name: 'acme-viewer', role: 'viewer', grants: [{ tenants: ['acme'], namespaces: ['payments'], actions: ['*'] }] },
  ];
  let gw: RunningGateway;
  const as = (caller: string, method: string, path: string, body?: unknown) => call(gw.url, method, path, body, keyHeader(caller));

  beforeAll(async () => {
    const { file } = credentialsFile({ keys: CALLERS });
    gw = await startGateway('memory', { background: { enable_retention_reaper: false }, auth: { enabled: true, file } });
  });
  afterAll(() => gw.close());

  it('needs credentials', async () => {
    expect((await call(gw.url, 'GET', `/v1/recurring${Q}`)).status).toBe(401);
  });

  it('writing needs the dispatch permission and a grant covering the whole template; reading needs read on the pair', async () => {
    const ok = await as('acme-op', 'POST', `/v1/recurring${Q}`, { cron_expr: '0 0 * * *', ...template });
    expect(ok.status).toBe(201);
    const id = ok.body.recurring_id as string;
    expect((await as('acme-op', 'POST', `/v1/recurring${Q}`, { cron_expr: '0 0 * * *', ...template, provider: 'sms' })).status).toBe(403);
    expect((await as('acme-op', 'POST', '/v1/recurring?namespace=payments&tenant=globex', { cron_expr: '0 0 * * *', ...template })).status).toBe(403);
    expect((await as('acme-op', 'PUT', `/v1/recurring/${id}${Q}`, { action_type: 'page' })).status).toBe(403);
    expect((await as('acme-viewer', 'POST', `/v1/recurring${Q}`, { cron_expr: '0 0 * * *', ...template })).status).toBe(403);
    expect((await as('acme-viewer', 'POST', `/v1/recurring/${id}/pause${Q}`)).status).toBe(403);
    expect((await as('acme-viewer', 'GET', `/v1/recurring/${id}${Q}`)).status).toBe(200);
    expect((await as('acme-viewer', 'GET', `/v1/recurring${Q}`)).body.count).toBe(1);
    expect((await as('acme-viewer', 'GET', '/v1/recurring?namespace=payments&tenant=globex')).status).toBe(403);
    expect((await as('acme-op', 'POST', `/v1/recurring/${id}/pause${Q}`)).status).toBe(200);
    expect((await as('acme-op', 'DELETE', `/v1/recurring/${id}${Q}`)).status).toBe(204);
  });

  it('an action whose template the grant does not cover is unknown to the caller (it holds a payload): 404 to read or change it', async () => {
    const created = await as('root', 'POST', `/v1/recurring${Q}`, { cron_expr: '0 0 * * *', ...template, provider: 'sms', payload: { secret: 's' } });
    const id = created.body.recurring_id as string;
    for (const [method, path, body] of [
      ['GET', `/v1/recurring/${id}${Q}`],
      ['PUT', `/v1/recurring/${id}${Q}`, { description: 'mine now' }],
      ['POST', `/v1/recurring/${id}/pause${Q}`],
      ['DELETE', `/v1/recurring/${id}${Q}`],
    ] as const) {
      const res = await as('acme-op', method, path, body);
      expect({ method, status: res.status, body: res.body }).toEqual({
        method,
        status: 404,
        body: { error: `recurring action not found: ${id}`, code: 'NOT_FOUND' },
      });
    }
    // Its list leaves it out too: a summary names the template's provider and action type.
    const listed = await as('acme-op', 'GET', `/v1/recurring${Q}`);
    expect((listed.body.recurring_actions as { id: string }[]).map((a) => a.id)).not.toContain(id);
    const after = await as('root', 'GET', `/v1/recurring/${id}${Q}`);
    expect(after.body).toMatchObject({ enabled: true, payload: { secret: 's' } });
    expect(after.body['description']).toBeUndefined();
  });
});
