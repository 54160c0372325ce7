import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, WILDCARD_GRANT, type CredentialsSpec } from '../support/credentials.js';
import { openStream, type SseStream } from '../support/sse-client.js';
import { BACKENDS, postJson, startGateway, type RunningGateway } from '../support/start-gateway.js';

const SPEC: CredentialsSpec = {
  keys: [
    { name: 'stays', role: 'viewer', grants: [WILDCARD_GRANT] },
    { name: 'removed', role: 'viewer', grants: [WILDCARD_GRANT] },
    { name: 'narrowed', role: 'viewer', grants: [WILDCARD_GRANT] },
  ],
  users: [{ name: 'alice', password: 'correct horse battery staple', role: 'viewer', grants: [WILDCARD_GRANT] }],
};

/** 'ended' when the server closes the stream within `ms`, else 'open'. */
const outcomeWithin = (stream: SseStream, ms: number) =>
  Promise.race([stream.ended.then(() => 'ended' as const), new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), ms))]);

// The gateway checks an open stream's credentials every 5 s (CALLER_RECHECK_MS).
describe.each(BACKENDS)('open streams follow their credentials (%s backend)', (backend) => {
  let gw: RunningGateway;
  let creds: ReturnType<typeof credentialsFile>;
  beforeAll(async () => {
    creds = credentialsFile(SPEC);
    gw = await startGateway(backend, { auth: { enabled: true, file: creds.file } });
  });
  afterAll(() => gw.close());

  it('ends the streams of a removed key, of a key whose grants changed, and of a logged-out token; keeps the others', async () => {
    const login = await postJson(`${gw.url}/v1/auth/login`, { username: 'alice', password: 'correct horse battery staple' });
    const bearer = { authorization: `Bearer ${(login.body as { token: string }).token}` };
    const [stays, removed, narrowed, token] = await Promise.all([
      openStream(`${gw.url}/v1/stream`, keyHeader('stays')),
      openStream(`${gw.url}/v1/stream`, keyHeader('removed')),
      openStream(`${gw.url}/v1/stream`, keyHeader('narrowed')),
      openStream(`${gw.url}/v1/stream`, bearer),
    ]);
    for (const s of [stays, removed, narrowed, token]) expect(s.status).toBe(200);

    creds.rewrite({
      ...SPEC,
      keys: [
        { name: 'stays', role: 'viewer', grants: [WILDCARD_GRANT] },
        { name: 'narrowed', role: 'viewer', grants: [{ ...WILDCARD_GRANT, tenants: ['acme'] }] },
      ],
    });
    expect((await postJson(`${gw.url}/v1/auth/logout`, {}, bearer)).status).toBe(200);

    const outcomes = await Promise.all([stays, removed, narrowed, token].map((s) => outcomeWithin(s, 12_000)));
    expect(outcomes).toEqual(['open', 'ended', 'ended', 'ended']);
    // A reconnect meets the credentials as they are now.
    expect((await openStream(`${gw.url}/v1/stream`, keyHeader('removed'))).status).toBe(401);
    stays.close();
  }, 30_000);

  it('has no HEAD twin: HEAD /v1/stream answers at once instead of holding a stream open', async () => {
    const res = await fetch(`${gw.url}/v1/stream`, { method: 'HEAD', headers: keyHeader('stays'), signal: AbortSignal.timeout(3000) });
    expect(res.status).toBe(404);
  });
});
