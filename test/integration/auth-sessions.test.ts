import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, rawKey, TEST_JWT_SECRET, WILDCARD_GRANT, type CredentialsSpec } from '../support/credentials.js';
import { poll } from '../support/poll.js';
import { BACKENDS, postJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const SPEC: CredentialsSpec = {
  keys: [{ name: 'svc', role: 'operator', grants: [WILDCARD_GRANT] }],
  users: [{ name: 'alice', password: 'correct horse battery staple', role: 'operator', grants: [WILDCARD_GRANT] }],
};

const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const claims = (over: Record<string, unknown> = {}) => ({
  sub: 'alice',
  jti: randomUUID(),
  role: 'admin',
  grants: [{ ...WILDCARD_GRANT, providers: ['*'] }],
  iat: Math.floor(Date.now() / 1000),
  exp: Math.floor(Date.now() / 1000) + 600,
  ...over,
});
const sign = (secret: string, over: Record<string, unknown> = {}) =>
  new SignJWT(claims(over)).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(secret));

describe.each(BACKENDS)('credentials on requests (%s backend)', (backend) => {
  let gw: RunningGateway;
  let creds: ReturnType<typeof credentialsFile>;
  beforeAll(async () => {
    creds = credentialsFile(SPEC);
    gw = await startGateway(backend, { auth: { enabled: true, file: creds.file } });
  });
  afterAll(() => gw.close());

  const dispatchWith = (headers: Record<string, string>) => postJson(`${gw.url}/v1/dispatch`, sampleAction(), headers);
  const login = (username: string, password: string) => postJson(`${gw.url}/v1/auth/login`, { username, password });

  it('accepts an API key as Bearer and as X-API-Key', async () => {
    expect((await dispatchWith(keyHeader('svc'))).status).toBe(200);
    expect((await dispatchWith({ 'x-api-key': rawKey('svc') })).status).toBe(200);
  });

  it('keeps health, readiness, metrics, the OpenAPI document and login public', async () => {
    for (const path of ['/health', '/ready', '/metrics', '/metrics/prometheus', '/api-doc/openapi.json']) {
      expect((await fetch(`${gw.url}${path}`)).status, path).toBe(200);
    }
    expect((await login('alice', 'wrong')).status).toBe(401);
    // A browser's cross-site login is refused by the guard, a documented 403 (it was a 500 under the response check).
    const crossSite = await fetch(`${gw.url}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' },
      body: JSON.stringify({ username: 'alice', password: 'wrong' }),
    });
    expect(crossSite.status).toBe(403);
  });

  it('documents the credentials in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${gw.url}/api-doc/openapi.json`)).json()) as {
      security: unknown;
      components: { securitySchemes: Record<string, unknown> };
      paths: Record<string, Record<string, { security?: unknown }>>;
    };
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKey', 'basic', 'bearer']);
    expect(doc.security).toEqual([{ bearer: [] }, { apiKey: [] }, { basic: [] }]);
    expect(doc.paths['/v1/auth/login']?.post?.security).toEqual([]);
    expect(doc.paths['/health']?.get?.security).toEqual([]);
    expect(doc.paths['/v1/dispatch']?.post?.security).toBeUndefined();
  });

  it('answers 404 for unknown routes whoever asks', async () => {
    expect((await fetch(`${gw.url}/v1/nothing-here`)).status).toBe(404);
  });

  it('refuses bad credentials with 401 and a JSON body, and keeps serving', async () => {
    const alicesToken = async (secret: string, over = {}) => `Bearer ${await sign(secret, over)}`;
    const noneToken = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims())}.`;
    const cases: [string, Record<string, string>, RegExp][] = [
      ['no credentials', {}, /^missing authentication credentials$/],
      // Basic carries an API key as its password (Prometheus's basic_auth): a user's password is not one.
      ['Basic with a user password', { authorization: 'Basic YWxpY2U6c2VjcmV0' }, /^invalid API key$/],
      ['another scheme', { authorization: 'Digest YWxpY2U6c2VjcmV0' }, /^malformed Authorization header/],
      ['Bearer without a value', { authorization: 'Bearer' }, /^malformed Authorization header/],
      ['Bearer with two values', { authorization: 'Bearer a b' }, /^malformed Authorization header/],
      ['blank Authorization', { authorization: '   ' }, /^empty Authorization header$/],
      ['unknown API key', keyHeader('nobody'), /^invalid API key$/],
      ['unknown X-API-Key', { 'x-api-key': 'nope' }, /^invalid API key$/],
      ['oversized token', { authorization: `Bearer ${'a'.repeat(9000)}` }, /too long/],
      ['oversized X-API-Key', { 'x-api-key': 'k'.repeat(9000) }, /too long/],
      ['alg none token', { authorization: `Bearer ${noneToken}` }, /^invalid token: /],
      ['wrong-secret token', { authorization: await alicesToken('another-secret-that-is-32-chars-long!!') }, /^invalid token: signature/],
      ['expired token', { authorization: await alicesToken(TEST_JWT_SECRET, { exp: Math.floor(Date.now() / 1000) - 3600 }) }, /^invalid token: expired/],
      ['malformed token', { authorization: 'Bearer eyJ.eyJ.sig' }, /^invalid token: /],
      ['token of an unknown user', { authorization: await alicesToken(TEST_JWT_SECRET, { sub: 'mallory' }) }, /^invalid token: unknown user$/],
    ];
    for (const [name, headers, message] of cases) {
      const res = await dispatchWith(headers);
      expect(res.status, name).toBe(401);
      expect(res.headers.get('www-authenticate'), name).toMatch(/^Bearer/);
      expect(res.body, name).toMatchObject({ code: 'UNAUTHORIZED', error: expect.stringMatching(message) });
      // No credential is echoed back.
      expect(JSON.stringify(res.body), name).not.toContain(rawKey('nobody'));
    }
    expect((await dispatchWith(keyHeader('svc'))).status).toBe(200);
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
  });

  it('logs in, dispatches with the token, logs out, and then refuses the token', async () => {
    const res = await login('alice', 'correct horse battery staple');
    expect(res).toMatchObject({ status: 200, body: { token: expect.any(String), expires_in: 3600 } });
    const bearer = { authorization: `Bearer ${(res.body as { token: string }).token}` };
    expect((await dispatchWith(bearer)).status).toBe(200);
    const out = await postJson(`${gw.url}/v1/auth/logout`, {}, bearer);
    expect(out).toMatchObject({ status: 200, body: { status: 'logged_out' } });
    expect(await dispatchWith(bearer)).toMatchObject({ status: 401, body: { error: 'token has been revoked' } });
  });

  it('refuses a wrong password and an unknown user alike, and logout without a JWT', async () => {
    expect(await login('alice', 'nope')).toMatchObject({ status: 401, body: { error: 'invalid credentials' } });
    expect(await login('mallory', 'nope')).toMatchObject({ status: 401, body: { error: 'invalid credentials' } });
    expect((await postJson(`${gw.url}/v1/auth/login`, { username: 'alice' })).status).toBe(400);
    expect(await postJson(`${gw.url}/v1/auth/logout`, {}, keyHeader('svc'))).toMatchObject({ status: 400, body: { error: 'logout needs a JWT' } });
    expect((await postJson(`${gw.url}/v1/auth/logout`, {})).status).toBe(401);
  });

  it('picks up a key added to the credentials file within 2 s, without a restart', async () => {
    expect((await dispatchWith(keyHeader('late'))).status).toBe(401);
    creds.rewrite({ ...SPEC, keys: [...(SPEC.keys ?? []), { name: 'late', role: 'operator', grants: [WILDCARD_GRANT] }] });
    const status = async () => (await dispatchWith(keyHeader('late'))).status;
    await poll('the new key to be accepted', status, (code) => code === 200, { timeoutMs: 2000, intervalMs: 50 });
    // A broken file keeps the last good credentials.
    creds.rewrite({ keys: [{ name: 'x', role: 'operator', grants: [WILDCARD_GRANT] }], jwtSecret: 'short' });
    await new Promise((r) => setTimeout(r, 1500));
    expect((await dispatchWith(keyHeader('late'))).status).toBe(200);
  });
});

describe.each(BACKENDS)('failed logins (%s backend)', (backend) => {
  let gw: RunningGateway;
  beforeAll(async () => {
    const { file } = credentialsFile({ users: [...(SPEC.users ?? []), { name: 'bob', password: 'bobs password', role: 'viewer', grants: [WILDCARD_GRANT] }] });
    gw = await startGateway(backend, { auth: { enabled: true, file, login_throttle: { max_attempts: 3, window_seconds: 120 } } });
  });
  afterAll(() => gw.close());
  const login = (username: string, password: string) => postJson(`${gw.url}/v1/auth/login`, { username, password });

  it('refuses a username after max_attempts failures, even with its password, and leaves other usernames alone', async () => {
    for (let i = 0; i < 3; i++) expect((await login('bob', 'guess')).status).toBe(401);
    const refused = await login('bob', 'bobs password');
    expect(refused).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED', retry_after: expect.any(Number) } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(100);
    expect((await login('alice', 'correct horse battery staple')).status).toBe(200);
    // An unknown username is counted the same way, so a 429 says nothing of which names exist.
    for (let i = 0; i < 3; i++) expect((await login('mallory', 'guess')).status).toBe(401);
    expect((await login('mallory', 'guess')).status).toBe(429);
  });

  it('counts only failures since the last success', async () => {
    for (let i = 0; i < 2; i++) expect((await login('alice', 'guess')).status).toBe(401);
    expect((await login('alice', 'correct horse battery staple')).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await login('alice', 'guess')).status).toBe(401);
    expect((await login('alice', 'correct horse battery staple')).status).toBe(429);
  });
});

describe('with auth disabled', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway('memory');
  });
  afterAll(() => gw.close());

  it('acts as an anonymous admin and answers 404 on login and logout', async () => {
    expect((await postJson(`${gw.url}/v1/dispatch`, sampleAction())).status).toBe(200);
    expect((await postJson(`${gw.url}/v1/rules/reload`, {})).status).toBe(200);
    for (const path of ['/v1/auth/login', '/v1/auth/logout']) {
      const res = await postJson(`${gw.url}${path}`, { username: 'a', password: 'b' });
      expect(res, path).toMatchObject({ status: 404, body: { error: 'authentication is not enabled', code: 'NOT_FOUND' } });
    }
  });
});
