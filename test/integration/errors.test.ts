import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poll } from '../support/poll.js';
import { postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

describe('error responses', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway('memory', { server: { max_body_bytes: 4096 } });
  });
  afterAll(() => gw.close());

  const keysOf = (body: unknown) => Object.keys(body as object).sort();

  it('400 INVALID_JSON for malformed JSON', async () => {
    const res = await postJson(`${gw.url}/v1/dispatch`, '{"namespace": ');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_JSON' });
    expect(typeof res.body?.error).toBe('string');
    expect(keysOf(res.body)).toEqual(['code', 'error']);
  });

  it('400 INVALID_JSON for an empty JSON body', async () => {
    const res = await postJson(`${gw.url}/v1/dispatch`, '');
    expect(res.status).toBe(400);
    expect(res.body?.code).toBe('INVALID_JSON');
  });

  it('400 VALIDATION_FAILED naming a key that could change object prototypes, and nothing is recorded', async () => {
    const action = JSON.stringify(sampleAction({ namespace: 'proto-ns' }));
    const cases: [string, string][] = [
      [action.replace('"payload":{', '"payload":{"__proto__":{"admin":true},'), 'payload.__proto__'],
      [action.replace('"payload":{', '"payload":{"items":[1,{"constructor":{"prototype":{"x":1}}}],'), 'payload.items.1.constructor.prototype'],
    ];
    for (const [body, path] of cases) {
      expect(body).not.toBe(action);
      const res = await postJson(`${gw.url}/v1/dispatch`, body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path }] });
    }
    // A `constructor` key without `prototype` is an ordinary key.
    const plain = await postJson(`${gw.url}/v1/dispatch`, action.replace('"payload":{', '"payload":{"constructor":{"name":"x"},'));
    expect(plain.status).toBe(200);
    const audit = await fetch(`${gw.url}/v1/audit?namespace=proto-ns`).then((r) => r.json() as Promise<{ total: number }>);
    expect(audit.total).toBe(1);
  });

  it('400 VALIDATION_FAILED naming a missing tenant', async () => {
    const { tenant: _omit, ...action } = sampleAction();
    const res = await postJson(`${gw.url}/v1/dispatch`, action);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'tenant' }] });
  });

  it('400 saying what a date-time should look like, not the pattern that refused it', async () => {
    for (const starts_at of ['2026-01-01T00:00:00.123456', '2026-01-01 00:00:00Z', 'yesterday']) {
      const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ starts_at }));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ path: 'starts_at', message: expect.stringMatching(/^must be an RFC 3339 date-time with a time zone/) }],
      });
      expect(JSON.stringify(res.body)).not.toContain('\\d');
    }
    const query = await fetch(`${gw.url}/v1/audit?from=2026-01-01`).then((r) => r.json());
    expect(query).toMatchObject({ details: [{ path: 'querystring.from', message: expect.stringMatching(/RFC 3339/) }] });
  });

  it('400 for a wrong type, never coerced', async () => {
    const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant: 5 }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ details: [{ path: 'tenant' }] });
  });

  it('400 names the failing batch item', async () => {
    const res = await postJson(`${gw.url}/v1/dispatch/batch`, { actions: [sampleAction(), sampleAction({ payload: 'x' })] });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ details: [{ path: 'actions.1.payload' }] });
  });

  it('400 for a bad query value', async () => {
    const res = await postJson(`${gw.url}/v1/dispatch?dry_run=maybe`, sampleAction());
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ details: [{ path: 'querystring.dry_run' }] });
  });

  it('400 for a misspelt query parameter on a write, and the action does not run', async () => {
    const namespace = 'misspelt-query';
    const single = await postJson(`${gw.url}/v1/dispatch?dryRun=true`, sampleAction({ namespace }));
    expect(single).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', details: [{ path: 'querystring.dryRun' }] } });
    const batch = await postJson(`${gw.url}/v1/dispatch/batch?dry-run=true`, { actions: [sampleAction({ namespace })] });
    expect(batch).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', details: [{ path: 'querystring.dry-run' }] } });
    // A valid dispatch after them: once the list shows it, it shows everything recorded before it.
    const valid = await postJson(`${gw.url}/v1/dispatch?dry_run=false`, sampleAction({ namespace, id: 'the-valid-one' }));
    expect(valid.status).toBe(200);
    const records = await poll(
      'the valid dispatch in the audit list',
      async () =>
        ((await requestJson('GET', `${gw.url}/v1/audit?namespace=${namespace}&tenant=${sampleAction().tenant}`)).body?.records ?? []) as {
          action_id: string;
        }[],
      (listed) => listed.length > 0,
    );
    expect(records.map((r) => r.action_id)).toEqual(['the-valid-one']);
  });

  it('400 for a misspelt filter on a read, instead of the unfiltered list', async () => {
    const res = await requestJson('GET', `${gw.url}/v1/audit?tenat=acme`);
    expect(res).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', details: [{ path: 'querystring.tenat' }] } });
    // Reads that take no parameter at all refuse one too: a limit or a scope would be ignored.
    for (const path of ['/v1/rules?limit=1', '/v1/dlq/stats?tenant=t', '/v1/auth/me?x=1', '/v1/compliance/status?x=1']) {
      expect((await requestJson('GET', `${gw.url}${path}`)).body, path).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    // Probes filter nothing: what a checker appends is no reason to read as down.
    for (const path of ['/health?_=1', '/ready?_=1', '/metrics?_=1']) expect((await fetch(`${gw.url}${path}`)).status, path).toBe(200);
  });

  it('400 for a literal null body, which is not an absent one', async () => {
    for (const path of ['/v1/dlq/drain', '/v1/dispatch']) {
      const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'null' });
      expect(res.status, path).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'body', message: 'must not be null' }] });
    }
  });

  it('415 for a wrong content type', async () => {
    const res = await fetch(`${gw.url}/v1/dispatch`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
    // On a DELETE too, a documented answer (the response check turned it into a 500).
    const deleted = await fetch(`${gw.url}/v1/quotas/nope`, { method: 'DELETE', headers: { 'content-type': 'text/plain' }, body: 'hi' });
    expect(deleted.status).toBe(415);
  });

  it('413 for a body over server.max_body_bytes', async () => {
    const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ payload: { blob: 'x'.repeat(5000) } }));
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('404 JSON for an unknown route', async () => {
    const res = await fetch(`${gw.url}/v1/nothing-here`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'route not found: GET /v1/nothing-here', code: 'NOT_FOUND' });
  });

  it('changes nothing on a rejected request', async () => {
    const before = gw.runtime.metrics.snapshot().dispatched;
    await postJson(`${gw.url}/v1/dispatch`, '{bad');
    await postJson(`${gw.url}/v1/dispatch`, { namespace: 'x' });
    expect(gw.runtime.metrics.snapshot().dispatched).toBe(before);
  });
});

describe('bodies that may be absent', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway('memory', {
      executor: { dlq_enabled: true },
      circuit_breaker: { enabled: true },
      providers: [{ name: 'p', type: 'noop' }],
    });
  });
  afterAll(() => gw.close());

  it('a POST whose body fields are all optional takes no body, or an empty one under Content-Type: application/json', async () => {
    for (const body of [undefined, '']) {
      expect(await requestJson('POST', `${gw.url}/v1/dlq/drain`, body)).toMatchObject({ status: 200, body: { entries: [], count: 0 } });
    }
  });

  it('a POST that takes no body accepts an empty one under Content-Type: application/json', async () => {
    expect(await requestJson('POST', `${gw.url}/admin/circuit-breakers/p/trip`, '')).toMatchObject({ status: 200, body: { state: 'open' } });
    expect(await requestJson('POST', `${gw.url}/admin/circuit-breakers/p/reset`, '')).toMatchObject({ status: 200, body: { state: 'closed' } });
  });

  it('a body that is needed is still refused when absent or empty, and a non-object is refused where fields are optional', async () => {
    expect(await requestJson('POST', `${gw.url}/v1/dispatch`, '')).toMatchObject({ status: 400, body: { code: 'INVALID_JSON' } });
    expect(await requestJson('POST', `${gw.url}/v1/dispatch`)).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
    expect(await requestJson('POST', `${gw.url}/v1/dlq/drain`, '[]')).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
    expect(await requestJson('POST', `${gw.url}/v1/dlq/drain`, { limit: 0 })).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
  });

  it('a body where none is taken is refused, pointing to the query string only where the route takes parameters there', async () => {
    const refused = (message: string) => ({ status: 400, body: { code: 'VALIDATION_FAILED', details: [{ path: 'body', message }] } });
    expect(await requestJson('POST', `${gw.url}/admin/circuit-breakers/p/trip`, { force: true })).toMatchObject(refused('this operation takes no body'));
    expect(await requestJson('POST', `${gw.url}/v1/audit/replay`, { tenant: 'acme' })).toMatchObject(
      refused('this operation takes no body; its parameters go in the query string'),
    );
  });
});
