import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rulesDir } from '../support/rules-dir.js';
import { BACKENDS, postJson, sampleAction, startGateway, type RunningGateway, requestJson } from '../support/start-gateway.js';

const FILE_RULES = `
rules:
  - name: file-suppress
    priority: 10
    description: from a file
    condition: { field: action.action_type, eq: blocked }
    action: { type: suppress }
`;

describe.each(BACKENDS)('rule endpoints (%s backend)', (backend) => {
  let gw: RunningGateway;
  let dir: string;
  beforeAll(async () => {
    dir = rulesDir({ 'a.yaml': FILE_RULES });
    gw = await startGateway(backend, { rules: { directory: dir } });
  });
  afterAll(() => gw.close());

  const rule = (name: string, priority: number, actionType: string) => ({
    name,
    priority,
    condition: { field: 'action.action_type', eq: actionType },
    action: { type: 'suppress', reason: `by ${name}` },
  });

  it('lists rules in priority order with their source', async () => {
    const res = await requestJson('GET', `${gw.url}/v1/rules`);
    expect(res.status).toBe(200);
    expect(res.body?.rules).toEqual([
      { name: 'file-suppress', priority: 10, enabled: true, description: 'from a file', source: 'yaml:a.yaml', action: 'suppress' },
    ]);
  });

  it('a deleted rule takes its error series with it once another rule starts one: churn leaves no series behind', async () => {
    const scrape = async () => (await fetch(`${gw.url}/metrics`)).text();
    for (const name of ['erring-1', 'erring-2', 'erring-3']) {
      // A condition that cannot be evaluated (counted, and treated as not matching).
      const erring = { name, priority: 50, expression: 'action.payload.missing > 1', action: { type: 'suppress' } };
      expect((await requestJson('POST', `${gw.url}/v1/rules`, erring)).status).toBe(201);
      expect((await postJson(`${gw.url}/v1/dispatch`, sampleAction())).body).toMatchObject({ outcome: 'executed' });
      expect(await scrape()).toMatch(new RegExp(`sluice_rule_errors_total\\{rule="${name}"\\} 1`));
      expect((await requestJson('DELETE', `${gw.url}/v1/rules/${name}`)).status).toBe(204);
    }
    const text = await scrape();
    expect(text).not.toMatch(/rule="erring-1"/);
    expect(text).not.toMatch(/rule="erring-2"/);
    expect(text).toMatch(/rule="erring-3"/); // until the next new one
  });

  it('creates, replaces and deletes API rules, which dispatch obeys', async () => {
    const created = await requestJson('POST', `${gw.url}/v1/rules`, rule('api-one', 5, 'from-api'));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'api-one', source: 'api', definition: { name: 'api-one' } });
    expect((await postJson(`${gw.url}/v1/dispatch`, sampleAction({ action_type: 'from-api' }))).body).toMatchObject({
      outcome: 'suppressed',
      rule: 'api-one',
    });
    expect((await requestJson('POST', `${gw.url}/v1/rules`, rule('api-one', 5, 'x'))).status).toBe(409);
    expect((await requestJson('POST', `${gw.url}/v1/rules`, rule('file-suppress', 5, 'x'))).status).toBe(409);
    const replaced = await requestJson('PUT', `${gw.url}/v1/rules/api-one`, { ...rule('api-one', 7, 'other'), name: undefined });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ priority: 7 });
    expect((await postJson(`${gw.url}/v1/dispatch`, sampleAction({ action_type: 'from-api' }))).body).toMatchObject({ outcome: 'executed' });
    expect((await requestJson('DELETE', `${gw.url}/v1/rules/api-one`)).status).toBe(204);
    expect((await requestJson('DELETE', `${gw.url}/v1/rules/api-one`)).status).toBe(404);
    expect((await requestJson('DELETE', `${gw.url}/v1/rules/file-suppress`)).status).toBe(409);
    expect(await requestJson('GET', `${gw.url}/v1/rules/api-one`)).toMatchObject({
      status: 404,
      body: { error: 'rule not found: api-one', code: 'NOT_FOUND' },
    });
  });

  it('rejects an invalid rule with details and changes nothing', async () => {
    const res = await requestJson('POST', `${gw.url}/v1/rules`, {
      name: 'bad',
      condition: { field: 'action.tenant', eq: 'a', contains: 'b' },
      action: { type: 'suppress' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(Array.isArray(res.body?.details)).toBe(true);
    expect((await requestJson('GET', `${gw.url}/v1/rules/bad`)).status).toBe(404);
  });

  it('disables and re-enables a rule', async () => {
    const off = await requestJson('PUT', `${gw.url}/v1/rules/file-suppress/enabled`, { enabled: false });
    expect(off.body).toEqual({ name: 'file-suppress', enabled: false });
    expect((await postJson(`${gw.url}/v1/dispatch`, sampleAction({ action_type: 'blocked' }))).body).toMatchObject({ outcome: 'executed' });
    expect(((await requestJson('GET', `${gw.url}/v1/rules`)).body?.rules as { enabled: boolean }[] | undefined)?.[0]?.enabled).toBe(false);
    await requestJson('PUT', `${gw.url}/v1/rules/file-suppress/enabled`, { enabled: true });
    expect((await postJson(`${gw.url}/v1/dispatch`, sampleAction({ action_type: 'blocked' }))).body).toMatchObject({ outcome: 'suppressed' });
    expect((await requestJson('PUT', `${gw.url}/v1/rules/nope/enabled`, { enabled: false })).status).toBe(404);
    expect((await requestJson('PUT', `${gw.url}/v1/rules/file-suppress/enabled`, { enabled: 'no' })).status).toBe(400);
  });

  it('reloads the directory, reporting bad files while loading the good ones', async () => {
    writeFileSync(
      join(dir, 'b.yaml'),
      `rules:\n  - name: added\n    priority: 1\n    condition: { field: action.action_type, eq: new }\n    action: { type: suppress }\n`,
    );
    writeFileSync(join(dir, 'broken.yaml'), `rules:\n  - name: broken\n    condition: { field: action.nowhere, eq: 1 }\n    action: { type: suppress }\n`);
    const res = await requestJson('POST', `${gw.url}/v1/rules/reload`);
    expect(res.status).toBe(200);
    expect(res.body?.loaded).toBe(2);
    expect(res.body?.errors).toEqual([expect.objectContaining({ file: 'broken.yaml', rule: 'broken', message: expect.stringContaining('action.nowhere') })]);
    expect((await postJson(`${gw.url}/v1/dispatch`, sampleAction({ action_type: 'new' }))).body).toMatchObject({ rule: 'added' });
  });
});
