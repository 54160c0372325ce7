import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, postJson, requestJson, startGateway, type RunningGateway } from '../support/start-gateway.js';

type Body = Record<string, unknown>;

const NOTIFY = { name: 'notify', steps: [{ name: 'email', provider: 'email', action_type: 'send' }] };
const CONFIG_CHAIN = { name: 'from-config', steps: [{ name: 'only', provider: 'email', action_type: 'send' }] };
const ONBOARD = {
  name: 'onboard',
  on_failure: 'skip',
  timeout_seconds: 600,
  steps: [
    { name: 'create', provider: 'crm', action_type: 'create_account' },
    { name: 'welcome', sub_chain: 'notify', delay_seconds: 5 },
    { name: 'audit', provider: 'email', action_type: 'log', on_failure: 'dlq' },
  ],
};
const PROVIDERS = ['email', 'crm'].map((name) => ({ name, type: 'log' }));

describe.each(BACKENDS)('chain definitions over HTTP (%s)', (backend) => {
  let gw: RunningGateway;
  const url = (path: string) => `${gw.url}${path}`;

  beforeAll(async () => {
    gw = await startGateway(backend, { providers: PROVIDERS, chains: { definitions: [CONFIG_CHAIN] } });
  });
  afterAll(() => gw.close());

  it('creates (201), reads, lists, replaces and deletes definitions; config ones are read-only', async () => {
    expect(await postJson(url('/v1/chains/definitions'), NOTIFY)).toMatchObject({ status: 201, body: { name: 'notify', on_failure: 'abort', source: 'api' } });
    expect((await postJson(url('/v1/chains/definitions'), ONBOARD)).status).toBe(201);
    expect(await postJson(url('/v1/chains/definitions'), NOTIFY)).toMatchObject({ status: 409, body: { error: 'chain definition already exists: notify' } });
    expect((await requestJson('GET', url('/v1/chains/definitions/onboard'))).body).toMatchObject({ ...ONBOARD, source: 'api' });
    const listed = (await requestJson('GET', url('/v1/chains/definitions'))).body;
    expect(((listed?.definitions as Body[] | undefined) ?? []).map((d) => `${d.name}:${d.source}`).sort()).toEqual([
      'from-config:config',
      'notify:api',
      'onboard:api',
    ]);
    const replaced = await requestJson('PUT', url('/v1/chains/definitions/notify'), { ...NOTIFY, description: 'mail the customer' });
    expect(replaced).toMatchObject({ status: 200, body: { description: 'mail the customer' } });
    expect((await requestJson('PUT', url('/v1/chains/definitions/fresh'), { ...NOTIFY, name: 'fresh' })).status).toBe(201);
    expect((await requestJson('PUT', url('/v1/chains/definitions/other'), NOTIFY)).status).toBe(400);
    expect((await requestJson('PUT', url('/v1/chains/definitions/from-config'), CONFIG_CHAIN)).status).toBe(409);
    expect((await requestJson('DELETE', url('/v1/chains/definitions/from-config'))).status).toBe(409);
    // notify is onboard's sub_chain: it stays until onboard no longer uses it.
    expect(await requestJson('DELETE', url('/v1/chains/definitions/notify'))).toMatchObject({
      status: 409,
      body: { error: expect.stringMatching(/sub_chain of onboard/) },
    });
    expect((await requestJson('DELETE', url('/v1/chains/definitions/fresh'))).status).toBe(204);
    expect((await requestJson('GET', url('/v1/chains/definitions/fresh'))).status).toBe(404);
  });

  it.each([
    ['an unknown provider', { name: 'bad', steps: [{ name: 's', provider: 'fax', action_type: 'x' }] }, 'steps.0.provider'],
    ['an unknown sub_chain', { name: 'bad', steps: [{ name: 's', sub_chain: 'nowhere' }] }, 'steps.0.sub_chain'],
    ['a step with both provider and sub_chain', { name: 'bad', steps: [{ name: 's', provider: 'email', action_type: 'x', sub_chain: 'notify' }] }, 'steps.0'],
    ['a step with neither', { name: 'bad', steps: [{ name: 's' }] }, 'steps.0'],
    ['duplicate step names', { name: 'bad', steps: [NOTIFY.steps[0], NOTIFY.steps[0]] }, 'steps'],
    ['a chain calling itself', { name: 'bad', steps: [{ name: 's', sub_chain: 'bad' }] }, 'steps'],
  ])('refuses %s with a 400 naming the place, creating nothing', async (_name, def, path) => {
    const res = await postJson(url('/v1/chains/definitions'), def);
    expect(res).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
    expect(((res.body?.details as Body[] | undefined) ?? []).map((d) => d.path)).toContain(path);
    expect((await requestJson('GET', url('/v1/chains/definitions/bad'))).status).toBe(404);
  });

  it('refuses a replacement that would close a sub_chain cycle', async () => {
    await postJson(url('/v1/chains/definitions'), { name: 'loop-a', steps: [{ name: 's', provider: 'email', action_type: 'x' }] });
    await postJson(url('/v1/chains/definitions'), { name: 'loop-b', steps: [{ name: 's', sub_chain: 'loop-a' }] });
    const res = await requestJson('PUT', url('/v1/chains/definitions/loop-a'), { name: 'loop-a', steps: [{ name: 's', sub_chain: 'loop-b' }] });
    expect(res).toMatchObject({ status: 400, body: { error: expect.stringMatching(/sub_chain cycle: loop-a → loop-b → loop-a/) } });
  });

  it("draws a definition's graph with its sub-chain nested", async () => {
    const dag = await requestJson('GET', url('/v1/chains/definitions/onboard/dag'));
    expect(dag.body).toEqual({
      chain_name: 'onboard',
      nodes: [
        { name: 'create', node_type: 'step', provider: 'crm', action_type: 'create_account' },
        {
          name: 'welcome',
          node_type: 'sub_chain',
          sub_chain_name: 'notify',
          children: {
            chain_name: 'notify',
            nodes: [{ name: 'email', node_type: 'step', provider: 'email', action_type: 'send' }],
            edges: [],
            execution_path: [],
          },
        },
        { name: 'audit', node_type: 'step', provider: 'email', action_type: 'log' },
      ],
      edges: [
        { source: 'create', target: 'welcome', on_execution_path: false },
        { source: 'welcome', target: 'audit', on_execution_path: false },
      ],
      execution_path: [],
    });
    expect((await requestJson('GET', url('/v1/chains/definitions/nope/dag'))).status).toBe(404);
  });
});

describe('chain definitions in the configuration', () => {
  it('stop start-up when they do not check out, naming each problem', async () => {
    const bad = {
      name: 'broken',
      steps: [
        { name: 's', sub_chain: 'missing' },
        { name: 't', provider: 'fax', action_type: 'x' },
      ],
    };
    await expect(startGateway('memory', { providers: PROVIDERS, chains: { definitions: [bad] } })).rejects.toThrow(
      /chains\.definitions\.0\.steps\.0\.sub_chain: unknown chain missing[\s\S]*chains\.definitions\.0\.steps\.1\.provider: unknown provider fax/,
    );
  });
});
