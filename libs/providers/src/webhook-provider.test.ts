import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderError } from './provider.js';
import { closedPortUrl, ctx, makeAction, reply, startServer, type TestServer } from './testing/http-server.js';
import { parseRetryAfter } from './webhook-errors.js';
import { WebhookProvider, type WebhookOptions } from './webhook-provider.js';

let server: TestServer | undefined;
let provider: WebhookProvider | undefined;
afterEach(async () => {
  await provider?.close();
  await server?.close();
  provider = server = undefined;
});

async function setup(handle: Parameters<typeof startServer>[0], opts: Partial<WebhookOptions> = {}): Promise<WebhookProvider> {
  server = await startServer(handle);
  provider = new WebhookProvider('hook', { url: server.url, maxResponseBytes: 1024, maxJsonDepth: 64, ...opts });
  return provider;
}

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError; // checked just above
}

describe('WebhookProvider', () => {
  it('POSTs the action as JSON with the configured headers', async () => {
    const p = await setup((_req, res) => reply(res, 200, { ok: true }, { 'x-upstream': 'yes' }), {
      headers: { 'X-Api-Key': 'k1', 'Content-Type': 'text/plain' },
    });
    const res = await p.execute(makeAction(), ctx());
    expect(res).toEqual({ status: 'success', body: { ok: true }, headers: expect.objectContaining({ 'x-upstream': 'yes' }) });
    const [req] = server!.received;
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe('/hook');
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.headers['x-api-key']).toBe('k1');
    expect(req?.headers['x-sluice-signature']).toBeUndefined();
    expect(JSON.parse(req!.body.toString('utf8'))).toEqual({
      id: 'a-1',
      namespace: 'ns',
      tenant: 't1',
      provider: 'hook',
      action_type: 'notify',
      payload: { msg: 'héllo', n: 1 },
      metadata: { labels: { env: 'test' } },
      created_at: '2025-01-01T00:00:00.000Z',
    });
  });

  it('signs the exact body bytes with HMAC-SHA256', async () => {
    const p = await setup((_req, res) => reply(res, 200, {}), { hmacSecret: 's3cret' });
    await p.execute(makeAction(), ctx());
    const [req] = server!.received;
    const expected = `sha256=${createHmac('sha256', 's3cret').update(req!.body).digest('hex')}`;
    expect(req?.headers['x-sluice-signature']).toBe(expected);
    // With the unix second it was sent, signed with the body: a replayed delivery is recognisable.
    const timestamp = Number(req?.headers['x-sluice-timestamp']);
    expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(5);
    const timestamped = `sha256=${createHmac('sha256', 's3cret').update(`${timestamp}.`).update(req!.body).digest('hex')}`;
    expect(req?.headers['x-sluice-signature-timestamped']).toBe(timestamped);
  });

  it('gives up draining an error answer whose body trickles after a second, keeping the status as the failure', async () => {
    const p = await setup(
      (_req, res) => {
        res.writeHead(503, { 'content-type': 'text/plain' });
        const drip = setInterval(() => res.write('.'), 200);
        res.on('close', () => clearInterval(drip));
      },
      { timeoutMs: 10_000 },
    );
    const started = Date.now();
    const failure = await p.execute(makeAction(), ctx()).catch((err: Error) => err);
    expect(Date.now() - started).toBeLessThan(3000);
    expect((failure as Error).message).toMatch(/answered HTTP 503/);
  });

  it('returns text bodies as text, empty bodies as null, and lying JSON as text', async () => {
    const answers = [
      (res: Parameters<typeof reply>[0]) => reply(res, 200, 'plain words'),
      (res: Parameters<typeof reply>[0]) => res.writeHead(204).end(),
      (res: Parameters<typeof reply>[0]) => res.writeHead(200, { 'content-type': 'application/json' }).end('{nope'),
    ];
    const p = await setup((_req, res, n) => answers[n - 1]?.(res));
    expect((await p.execute(makeAction(), ctx())).body).toBe('plain words');
    expect((await p.execute(makeAction(), ctx())).body).toBeNull();
    expect((await p.execute(makeAction(), ctx())).body).toBe('{nope');
  });

  it('reuses keep-alive sockets across success and error answers', async () => {
    const p = await setup((_req, res, n) => reply(res, n % 2 === 0 ? 500 : 200, { n, pad: 'y'.repeat(300) }));
    for (let i = 0; i < 10; i++) await p.execute(makeAction(), ctx()).catch(() => undefined);
    // Closing sockets after error answers (or pinning them) would show up as one port per call.
    const ports = new Set(server!.received.map((r) => r.remotePort));
    expect(server!.received).toHaveLength(10);
    expect(ports.size).toBeLessThanOrEqual(2);
  });

  it.each([
    [400, 'EXECUTION_FAILED', false],
    [404, 'EXECUTION_FAILED', false],
    [408, 'TIMEOUT', true],
    [429, 'RATE_LIMITED', true],
    [500, 'EXECUTION_FAILED', true],
    [503, 'EXECUTION_FAILED', true],
  ])('maps HTTP %i to %s (retryable %s)', async (status, code, retryable) => {
    const p = await setup((_req, res) => reply(res, status, { error: 'x' }));
    const err = await failure(p.execute(makeAction(), ctx()));
    expect({ code: err.code, retryable: err.retryable, httpStatus: err.httpStatus }).toEqual({ code, retryable, httpStatus: status });
  });

  it('reads Retry-After on 429', async () => {
    const p = await setup((_req, res) => reply(res, 429, {}, { 'retry-after': '2' }));
    expect((await failure(p.execute(makeAction(), ctx()))).retryAfterMs).toBe(2000);
  });

  it.each([
    ['with content-length', true],
    ['chunked', false],
  ])('fails clearly on an oversize response (%s)', async (_label, withLength) => {
    const big = 'x'.repeat(5000);
    const p = await setup((_req, res) => {
      if (withLength) reply(res, 200, big);
      else {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write(big.slice(0, 2500));
        res.end(big.slice(2500));
      }
    });
    const err = await failure(p.execute(makeAction(), ctx()));
    expect(err.code).toBe('EXECUTION_FAILED');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('max_response_bytes');
  });

  it('times out on its own timeout_ms when the server never answers', async () => {
    const p = await setup(() => {}, { timeoutMs: 100 });
    const err = await failure(p.execute(makeAction(), ctx()));
    expect(err.code).toBe('TIMEOUT');
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('100 ms');
  });

  it('stops when the caller aborts, keeping the abort reason if it is a ProviderError', async () => {
    const p = await setup(() => {});
    const ac = new AbortController();
    setTimeout(() => ac.abort(new ProviderError('TIMEOUT', 'attempt budget spent', { retryable: true })), 50);
    const err = await failure(p.execute(makeAction(), ctx(ac.signal)));
    expect(err.message).toBe('attempt budget spent');
  });

  it('reports a refused connection as CONNECTION, retryable', async () => {
    provider = new WebhookProvider('hook', { url: await closedPortUrl(), maxResponseBytes: 1024, maxJsonDepth: 64 });
    const err = await failure(provider.execute(makeAction(), ctx()));
    expect(err.code).toBe('CONNECTION');
    expect(err.retryable).toBe(true);
    // Tenants read this message: it names the code, not the provider's address (logged at debug).
    expect(err.message).toBe('webhook "hook" connection failed (ECONNREFUSED)');
  });

  it('rejects a non-http url at construction', () => {
    expect(() => new WebhookProvider('hook', { url: 'ftp://example.com/', maxResponseBytes: 1, maxJsonDepth: 64 })).toThrow(/http/);
  });

  it('rejects, at construction, credentials in the url and headers no call could send', () => {
    const make =
      (url: string, headers: Record<string, string> = {}) =>
      () =>
        new WebhookProvider('hook', { url, headers, maxResponseBytes: 1, maxJsonDepth: 64 });
    expect(make('http://user:secret@example.com/')).toThrow(/credentials in the url are not sent/);
    expect(make('http://example.com/', { 'Bad Header': 'x' })).toThrow(/"bad header" is not a valid header name/);
    expect(make('http://example.com/', { 'X-A': 'x\r\nX-Injected: 1' })).toThrow(/line break/);
    expect(make('http://example.com/', { 'Transfer-Encoding': 'chunked' })).toThrow(/framing header the HTTP client sets itself/);
    expect(make('http://example.com/', { Authorization: 'Bearer t', 'X-Trace_Id': 'a b', Host: 'orders.internal' })).not.toThrow();
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates, ignores junk', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});
