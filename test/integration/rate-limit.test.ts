import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, WILDCARD_GRANT } from '../support/credentials.js';
import { BACKENDS, postJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const RATE_LIMIT = {
  enabled: true,
  per_caller: { requests_per_window: 3, window_seconds: 60 },
  per_tenant: { requests_per_window: 5, window_seconds: 60 },
  caller_overrides: { big: { requests_per_window: 100, window_seconds: 60 } },
};

describe.each(BACKENDS)('request rate limits (%s backend)', (backend) => {
  let gw: RunningGateway;
  beforeAll(async () => {
    const keys = ['small', 'other', 'big'].map((name) => ({ name, role: 'operator' as const, grants: [WILDCARD_GRANT] }));
    gw = await startGateway(backend, { auth: { enabled: true, file: credentialsFile({ keys }).file }, rate_limit: RATE_LIMIT });
  });
  afterAll(() => gw.close());

  const dispatch = (caller: string, tenant: string) => postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant }), keyHeader(caller));
  const batch = (caller: string, tenant: string, n: number) =>
    postJson(`${gw.url}/v1/dispatch/batch`, { actions: Array.from({ length: n }, () => sampleAction({ tenant })) }, keyHeader(caller));

  it('answers 429 with Retry-After once a caller is over its limit; other callers are unaffected', async () => {
    for (let i = 0; i < 3; i++) expect((await dispatch('small', `t-small-${i}`)).status).toBe(200);
    const refused = await dispatch('small', 't-small-x');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'RATE_LIMITED', error: 'rate limit exceeded', retry_after: expect.any(Number) });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBe((refused.body as { retry_after: number }).retry_after);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect((await dispatch('other', 't-other')).status).toBe(200);
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
  });

  it('counts every dispatched action against its tenant; a refused batch consumes nothing', async () => {
    expect((await batch('big', 't-batch', 5)).status).toBe(200);
    expect((await dispatch('big', 't-batch')).status).toBe(429);
    expect((await batch('big', 't-fresh', 6)).status).toBe(429);
    expect((await batch('big', 't-fresh', 5)).status).toBe(200);
  });

  it('limits a tenant named like an Object member (constructor, __proto__, valueOf) as any other, not with a 500', async () => {
    for (const tenant of ['constructor', '__proto__', 'valueOf']) {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await dispatch('big', tenant)).status);
      expect({ tenant, statuses }).toEqual({ tenant, statuses: [200, 200, 200, 200, 200, 429] });
    }
  });

  it('a batch refused for one tenant charges none of the others in it', async () => {
    expect((await batch('big', 't-full', 5)).status).toBe(200);
    const mixed = { actions: [sampleAction({ tenant: 't-bystander' }), sampleAction({ tenant: 't-full' })] };
    for (let i = 0; i < 6; i++) expect((await postJson(`${gw.url}/v1/dispatch/batch`, mixed, keyHeader('big'))).status).toBe(429);
    // Six refused batches named it, and it dispatched nothing: its whole limit is left.
    expect((await batch('big', 't-bystander', 5)).status).toBe(200);
  });

  it('dry runs dispatch nothing and count against no tenant', async () => {
    for (let i = 0; i < 7; i++) {
      const dry = await postJson(`${gw.url}/v1/dispatch?dry_run=true`, sampleAction({ tenant: 't-dry' }), keyHeader('big'));
      expect(dry).toMatchObject({ status: 200, body: { outcome: 'dry_run' } });
    }
    expect(
      (
        await postJson(
          `${gw.url}/v1/dispatch/batch?dry_run=true`,
          { actions: Array.from({ length: 6 }, () => sampleAction({ tenant: 't-dry' })) },
          keyHeader('big'),
        )
      ).status,
    ).toBe(200);
    expect((await batch('big', 't-dry', 5)).status).toBe(200);
  });

  it('counts replays against the tenant as dispatches: a tenant at its limit cannot replay its way past it', async () => {
    expect((await batch('big', 't-replay', 3)).status).toBe(200);
    const ids = (
      (await (await fetch(`${gw.url}/v1/audit?tenant=t-replay`, { headers: keyHeader('big') })).json()) as { records: { action_id: string }[] }
    ).records.map((r) => r.action_id);
    // One replay by id (4 of 5), then a bulk replay of 3 would take the tenant to 7: 429, nothing replayed.
    expect((await postJson(`${gw.url}/v1/audit/${ids[0]}/replay`, {}, keyHeader('big'))).status).toBe(200);
    const bulk = await postJson(`${gw.url}/v1/audit/replay?tenant=t-replay&limit=3`, {}, keyHeader('big'));
    expect(bulk).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED' } });
    const after = (await (await fetch(`${gw.url}/v1/audit?tenant=t-replay`, { headers: keyHeader('big') })).json()) as { records: unknown[] };
    expect(after.records).toHaveLength(4);
    expect((await postJson(`${gw.url}/v1/audit/${ids[1]}/replay`, {}, keyHeader('big'))).status).toBe(200);
    expect((await postJson(`${gw.url}/v1/audit/${ids[2]}/replay`, {}, keyHeader('big'))).status).toBe(429);
  });
});
