import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    expect((await requestJson('GET', `${gw.url}/health`)).status).toBe(200);
    expect(((await requestJson('GET', `${gw.url}/v1/audit?tenant=${tenant}`)).body as { total?: number; records: unknown[] }).records).toHaveLength(0);
    // Within the limit: accepted and audited.
    expect((await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant, payload: nested(60) }))).body).toMatchObject({ outcome: 'executed' });
    expect(((await requestJson('GET', `${gw.url}/v1/audit?tenant=${tenant}`)).body as { records: unknown[] }).records).toHaveLength(1);
  });
});
