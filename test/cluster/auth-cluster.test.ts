import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, WILDCARD_GRANT } from '../support/credentials.js';
import { postJson, sampleAction } from '../support/start-gateway.js';
import { Cluster } from './harness.js';

describe('auth across 3 replicas sharing Redis', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    const { file } = credentialsFile({
      keys: [{ name: 'limited', role: 'operator', grants: [WILDCARD_GRANT] }],
      users: [
        { name: 'alice', password: 'pw-alice', role: 'operator', grants: [WILDCARD_GRANT] },
        { name: 'bob', password: 'pw-bob', role: 'viewer', grants: [WILDCARD_GRANT] },
      ],
    });
    cluster = await Cluster.start({
      apis: 3,
      workers: 0,
      config: {
        auth: { enabled: true, file, login_throttle: { max_attempts: 5, window_seconds: 300 } },
        rate_limit: { enabled: true, caller_overrides: { limited: { requests_per_window: 10, window_seconds: 300 } } },
      },
    });
  }, 60_000);
  afterAll(() => cluster?.stop());

  it('refuses on every replica a token logged out on one', async () => {
    const [a, b, c] = cluster.apis;
    if (!a || !b || !c) throw new Error('expected 3 replicas');
    const login = await postJson(`${a.url}/v1/auth/login`, { username: 'alice', password: 'pw-alice' });
    const bearer = { authorization: `Bearer ${(login.body as { token: string }).token}` };
    for (const api of [a, b, c]) expect((await postJson(`${api.url}/v1/dispatch`, sampleAction(), bearer)).status).toBe(200);
    expect((await postJson(`${a.url}/v1/auth/logout`, {}, bearer)).status).toBe(200);
    for (const api of [b, c, a]) {
      expect(await postJson(`${api.url}/v1/dispatch`, sampleAction(), bearer)).toMatchObject({ status: 401, body: { error: 'token has been revoked' } });
    }
  });

  it('checks exactly 5 of 30 concurrent wrong logins of one username across replicas, and refuses the rest', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 30 }, async () => (await postJson(`${cluster.nextApi().url}/v1/auth/login`, { username: 'bob', password: 'guess' })).status),
    );
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(25);
    expect((await postJson(`${cluster.nextApi().url}/v1/auth/login`, { username: 'bob', password: 'pw-bob' })).status).toBe(429);
  });

  it('lets exactly 10 of 40 concurrent requests through a caller limit of 10', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 40 }, async () => (await postJson(`${cluster.nextApi().url}/v1/dispatch`, sampleAction(), keyHeader('limited'))).status),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30);
  });
});
