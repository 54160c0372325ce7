import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, WILDCARD_GRANT } from '../support/credentials.js';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { rulesDir } from '../support/rules-dir.js';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

/** `{"a":{"a":…{"leaf":1}}}`, `levels` objects deep. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

describe.each(BACKENDS)('hostile inputs (%s)', (backend) => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(backend);
  });
  afterAll(() => gw.close());

  it('refuses a body nested deeper than server.max_json_depth with 400 naming the path, and records nothing', async () => {
    const tenant = `deep-${backend}`;
    const refused = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant, payload: nested(70) }));
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'BAD_REQUEST', error: expect.stringMatching(/deeper than 64 levels at payload(\.a)+/) });
    // A hundred thousand levels: refused as fast, and the server is still there.
    const raw = `{"namespace":"n","tenant":"${tenant}","provider":"p","action_type":"t","payload":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`;
    expect((await postJson(`${gw.url}/v1/dispatch`, raw)).status).toBe(400);
    // Arrays count as levels too, and their indexes name the path.
    const arrays = await postJson(
      `${gw.url}/v1/dispatch`,
      sampleAction({ tenant, payload: { list: ['x', JSON.parse(`${'['.repeat(70)}1${']'.repeat(70)}`)] } }),
    );
    expect(arrays.body).toMatchObject({ code: 'BAD_REQUEST', error: expect.stringMatching(/deeper than 64 levels at payload\.list\.1(\.0)+ /) });
    expect((await requestJson('GET', `${gw.url}/health`)).status).toBe(200);
    expect(((await requestJson('GET', `${gw.url}/v1/audit?tenant=${tenant}`)).body as { total?: number; records: unknown[] }).records).toHaveLength(0);
    // Within the limit: accepted and audited.
    expect((await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant, payload: nested(60) }))).body).toMatchObject({ outcome: 'executed' });
    expect(((await requestJson('GET', `${gw.url}/v1/audit?tenant=${tenant}`)).body as { records: unknown[] }).records).toHaveLength(1);
  });
});

describe.each(BACKENDS)('lone surrogates (%s)', (backend) => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(backend);
  });
  afterAll(() => gw.close());

  it('refuses a lone UTF-16 surrogate anywhere in a body, naming where; a well-formed pair is fine', async () => {
    // Raw JSON: JSON.stringify would write the escape we want to send anyway, but be explicit.
    const body = (field: string) => `{"namespace":"n","tenant":"surrogates-${backend}","provider":"email","action_type":"t","payload":{},${field}}`;
    for (const [field, where] of [
      ['"id":"a\\ud800b"', 'at id'],
      ['"dedup_key":"\\udc00"', 'at dedup_key'],
      ['"metadata":{"labels":{"env":"x\\ud83d"}}', 'at metadata.labels.env'],
      ['"metadata":{"k\\udfff":1}', 'in a key at metadata.k'],
      ['"metadata":{"list":["ok",{"v":["x\\udc00"]}]}', 'at metadata.list.1.v.0'],
    ] as const) {
      const res = await postJson(`${gw.url}/v1/dispatch`, body(field));
      expect(res.status, field).toBe(400);
      expect((res.body as { error: string }).error).toContain(where);
    }
    const fine = await postJson(`${gw.url}/v1/dispatch`, body('"id":"emoji-\\ud83d\\ude00"'));
    expect(fine.body).toMatchObject({ outcome: 'executed', action_id: 'emoji-\u{1F600}' });
    const records = await requestJson('GET', `${gw.url}/v1/audit?tenant=surrogates-${backend}`);
    expect((records.body as { records: unknown[] }).records).toHaveLength(1);
  });

  it('refuses the metadata keys the audit record keeps action fields under (a replay would read them back as the fields)', async () => {
    for (const key of ['__dedup_key', '__status', '__fingerprint', '__starts_at', '__ends_at']) {
      const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant: `surrogates-${backend}`, metadata: { [key]: 'x' } }));
      expect(res, key).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
      expect((res.body as { error: string }).error).toContain(key);
    }
    const own = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant: `reserved-${backend}`, metadata: { __mine: 'x', labels: { a: 'b' } } }));
    expect(own.body).toMatchObject({ outcome: 'executed' });
  });

  it('refuses a number beyond a double (1e309 reads as infinity, then goes on as null), naming where', async () => {
    const body = (payload: string) => `{"namespace":"n","tenant":"surrogates-${backend}","provider":"email","action_type":"t","payload":${payload}}`;
    for (const [payload, where] of [
      ['{"amount":1e309}', 'at payload.amount'],
      ['{"list":[1,-1e400]}', 'at payload.list.1'],
    ] as const) {
      const res = await postJson(`${gw.url}/v1/dispatch`, body(payload));
      expect(res.status, payload).toBe(400);
      expect((res.body as { error: string }).error).toContain(where);
    }
    const records = await requestJson('GET', `${gw.url}/v1/audit?tenant=surrogates-${backend}`);
    expect((records.body as { records: unknown[] }).records).toHaveLength(1);
    expect((await postJson(`${gw.url}/v1/dispatch`, body('{"amount":1.7976931348623157e308}'))).status).toBe(200);
  });
});

describe.each(BACKENDS)('a failed dispatch gives its dedup key back (%s)', (backend) => {
  let gw: RunningGateway;
  let sink: HttpSink;
  const RULES =
    'rules:\n  - { name: once, priority: 1, condition: { field: action.action_type, eq: charge }, action: { type: deduplicate, ttl_seconds: 600 } }\n';
  const charge = async (dedup_key: string, provider = 'hook') =>
    (await postJson(`${gw.url}/v1/dispatch`, sampleAction({ action_type: 'charge', provider, dedup_key }))).body as {
      outcome: string;
      error?: { code: string };
    };

  beforeAll(async () => {
    sink = await startSink();
    gw = await startGateway(backend, {
      providers: [{ name: 'hook', type: 'webhook', url: sink.url }],
      executor: { max_retries: 0 },
      rules: { directory: rulesDir({ 'dedup.yaml': RULES }) },
    });
  });
  afterAll(async () => {
    await gw.close();
    await sink.close();
  });

  it('a retry after a failure executes instead of coming back deduplicated; once it succeeds, repeats are deduplicated', async () => {
    const key = `k-${backend}`;
    sink.status = 503;
    expect(await charge(key)).toMatchObject({ outcome: 'failed', error: { code: 'EXECUTION_FAILED' } });
    expect((await charge(key)).outcome).toBe('failed');
    expect(await charge(key, 'nowhere')).toMatchObject({ outcome: 'failed', error: { code: 'PROVIDER_NOT_FOUND' } });
    sink.status = 200;
    expect((await charge(key)).outcome).toBe('executed');
    expect((await charge(key)).outcome).toBe('deduplicated');
  });

  it('of concurrent retries after a failure, exactly one executes', async () => {
    const key = `race-${backend}`;
    sink.status = 503;
    expect((await charge(key)).outcome).toBe('failed');
    sink.status = 200;
    const before = sink.received.length;
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => charge(key)));
    expect(outcomes.filter((o) => o.outcome === 'executed')).toHaveLength(1);
    expect(outcomes.filter((o) => o.outcome === 'deduplicated')).toHaveLength(9);
    expect(sink.received.length).toBe(before + 1);
  });
});

describe.each(BACKENDS)('action ids are per tenant (%s)', (backend) => {
  let gw: RunningGateway;
  const grant = (tenant: string) => [{ tenants: [tenant], namespaces: ['*'], actions: ['*'] }];
  const CALLERS = [
    { name: 'root', role: 'admin' as const, grants: [WILDCARD_GRANT] },
    { name: 'alpha', role: 'operator' as const, grants: grant('alpha') },
    { name: 'beta', role: 'operator' as const, grants: grant('beta') },
  ];
  beforeAll(async () => {
    gw = await startGateway(backend, { auth: { enabled: true, file: credentialsFile({ keys: CALLERS }).file } });
  });
  afterAll(() => gw.close());

  const recordOf = async (caller: string, id: string) => requestJson('GET', `${gw.url}/v1/audit/${id}`, undefined, keyHeader(caller));

  it("one tenant reusing another's id neither shadows nor reveals the other's record; each sees its own", async () => {
    const id = `shared-id-${backend}`;
    const sent = (caller: string, tenant: string, marker: string) =>
      postJson(`${gw.url}/v1/dispatch`, sampleAction({ id, tenant, payload: { marker } }), keyHeader(caller));
    expect((await sent('beta', 'beta', 'from beta')).status).toBe(200);
    // The squatter dispatches later with the same id, again and again: before ids were per
    // tenant, beta then got 403 for its own action.
    for (let i = 0; i < 20; i++) expect((await sent('alpha', 'alpha', 'from alpha')).status).toBe(200);

    const beta = await recordOf('beta', id);
    expect(beta.status).toBe(200);
    expect(beta.body).toMatchObject({ action_id: id, tenant: 'beta', action_payload: { marker: 'from beta' } });
    const alpha = await recordOf('alpha', id);
    expect(alpha.body).toMatchObject({ action_id: id, tenant: 'alpha', action_payload: { marker: 'from alpha' } });
    // A caller granted both sees the newest, or the one of the tenant it names (and replays that one).
    expect((await recordOf('root', id)).body).toMatchObject({ tenant: 'alpha' });
    expect((await recordOf('root', `${id}?tenant=beta`)).body).toMatchObject({ tenant: 'beta', action_payload: { marker: 'from beta' } });
    expect((await recordOf('root', `${id}?tenant=beta&namespace=elsewhere`)).status).toBe(404);
    expect((await recordOf('alpha', `${id}?tenant=beta`)).status).toBe(403);
    const replayed = await postJson(`${gw.url}/v1/audit/${id}/replay?tenant=beta`, {}, keyHeader('root'));
    expect(replayed).toMatchObject({ status: 200, body: { success: true } });
    const replay = await recordOf('root', String(replayed.body?.['new_action_id']));
    expect(replay.body).toMatchObject({ tenant: 'beta', action_payload: { marker: 'from beta' } });
    // Separate records, each in its own tenant.
    const ids = async (tenant: string) =>
      (
        (await requestJson('GET', `${gw.url}/v1/audit?tenant=${tenant}&limit=100`, undefined, keyHeader('root'))).body as { records: { action_id: string }[] }
      ).records
        .map((r) => r.action_id)
        .filter((a) => a === id);
    expect(await ids('beta')).toHaveLength(1);
    expect(await ids('alpha')).toHaveLength(20);
  });

  it("another tenant's reuse of an id beyond a page of the id's pointer (1,000 entries) still hides nothing", async () => {
    const id = `flooded-id-${backend}`;
    expect((await postJson(`${gw.url}/v1/dispatch`, sampleAction({ id, tenant: 'beta' }), keyHeader('beta'))).status).toBe(200);
    // Batch items share dispatch milliseconds: pages must also part entries of one score.
    for (const size of [1000, 500]) {
      const flood = await postJson(
        `${gw.url}/v1/dispatch/batch`,
        { actions: Array.from({ length: size }, () => sampleAction({ id, tenant: 'alpha' })) },
        keyHeader('alpha'),
      );
      expect(flood.status).toBe(200);
    }
    expect(await recordOf('beta', id)).toMatchObject({ status: 200, body: { action_id: id, tenant: 'beta' } });
    const replayed = await postJson(`${gw.url}/v1/audit/${id}/replay`, {}, keyHeader('beta'));
    expect(replayed).toMatchObject({ status: 200, body: { success: true } });
  });

  it('answers 404 for an id only another tenant used', async () => {
    const id = `unshared-${backend}`;
    await postJson(`${gw.url}/v1/dispatch`, sampleAction({ id, tenant: 'beta' }), keyHeader('beta'));
    const hidden = await recordOf('alpha', id);
    expect(hidden.status).toBe(404);
    expect(JSON.stringify(hidden.body)).not.toMatch(/beta/);
  });
});
