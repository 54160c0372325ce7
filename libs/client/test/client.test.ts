import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, rawKey, WILDCARD_GRANT } from '../../../test/support/credentials.js';
import { sampleAction, startGateway, type RunningGateway } from '../../../test/support/start-gateway.js';
import { createSluiceClient, SluiceApiError, SluiceStreamClosed, type StreamEvent } from '../src/index.js';
import { checkedInTypes, generateTypes, liveDocument } from './openapi-types.js';

/** The first rejection's error, or a failure when the promise resolves. */
async function refusal(promise: Promise<unknown>): Promise<SluiceApiError> {
  const err = await promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SluiceApiError);
  return err as SluiceApiError;
}

describe('@sluice/client against a running gateway', () => {
  let gw: RunningGateway;
  const key = rawKey('ops');

  beforeAll(async () => {
    const { file } = credentialsFile({ keys: [{ name: 'ops', role: 'admin', grants: [WILDCARD_GRANT] }] });
    gw = await startGateway('memory', {
      auth: { enabled: true, file },
      // Two dispatched actions a second per tenant: the third waits for the next window.
      rate_limit: { enabled: true, per_tenant: { requests_per_window: 2, window_seconds: 1 } },
    });
  });
  afterAll(() => gw?.close());

  it('its types are the live OpenAPI document’s (regenerate with npm run generate -w @sluice/client)', async () => {
    expect(await generateTypes(await liveDocument())).toBe(checkedInTypes());
  });

  it('dispatches one action and a batch, setting ids, with typed outcomes', async () => {
    const client = createSluiceClient({ url: gw.url, apiKey: key });
    const outcome = await client.dispatch(sampleAction({ tenant: 'one' }));
    expect(outcome).toMatchObject({ outcome: 'executed', action_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const kept = await client.dispatch(sampleAction({ tenant: 'two', id: 'my-id-1' }), { dryRun: true });
    expect(kept).toMatchObject({ outcome: 'dry_run', action_id: 'my-id-1' });
    const batch = await client.dispatchBatch([sampleAction({ tenant: 'three' }), sampleAction({ tenant: 'four' })]);
    expect(batch.results.map((r) => r.status)).toEqual(['success', 'success']);
    // Every endpoint through the typed client.
    const { data } = await client.api.GET('/v1/rules');
    expect(data).toMatchObject({ rules: [] });
  });

  it('throws typed errors carrying the code', async () => {
    const anonymous = createSluiceClient({ url: gw.url });
    const unauthorized = await refusal(anonymous.dispatch(sampleAction()));
    expect(unauthorized).toMatchObject({ status: 401, code: 'UNAUTHORIZED', message: 'missing authentication credentials' });
    const client = createSluiceClient({ url: gw.url, apiKey: key });
    const invalid = await refusal(client.dispatch({ ...sampleAction(), namespace: '' }));
    expect(invalid).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
  });

  it('retries a 429 after its Retry-After, and gives up when told to', async () => {
    const patient = createSluiceClient({ url: gw.url, apiKey: key });
    const started = Date.now();
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push(await patient.dispatch(sampleAction({ tenant: 'limited' })));
    expect(outcomes.map((o) => o.outcome)).toEqual(['executed', 'executed', 'executed']);
    // The third waited for the next one-second window (unless the first two straddled a boundary).
    expect(Date.now() - started).toBeLessThan(5000);
    const hasty = createSluiceClient({ url: gw.url, apiKey: key, retries: 0 });
    const refused = [];
    for (let i = 0; i < 3; i++) refused.push(await hasty.dispatch(sampleAction({ tenant: 'hasty' })).catch((e: unknown) => e));
    const limited = refused.filter((r) => r instanceof SluiceApiError);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
  });

  it('does not send again what a 503 FEATURE_DISABLED refused (the bus is off here): the answer comes at once', async () => {
    const client = createSluiceClient({ url: gw.url, apiKey: key });
    const started = Date.now();
    const { response } = await client.api.POST('/v1/bus/topics', { body: { namespace: 'n', tenant: 't', name: 'x' } });
    expect(response.status).toBe(503);
    // Retried, it would have waited 0.5 + 1 + 2 s.
    expect(Date.now() - started).toBeLessThan(400);
  });

  it('iterates over the live stream', async () => {
    const client = createSluiceClient({ url: gw.url, apiKey: key });
    const controller = new AbortController();
    const seen: StreamEvent[] = [];
    const reading = (async () => {
      for await (const event of client.stream({ event_type: 'action_dispatched', namespace: 'payments' }, { signal: controller.signal })) {
        seen.push(event);
        if (event.data.tenant === 'streamed') return;
      }
    })();
    // The subscription is registered once the answer started: dispatch until one is seen.
    const deadline = Date.now() + 5000;
    while (seen.length === 0 && Date.now() < deadline) {
      await client.dispatch(sampleAction({ tenant: 'streamed' }));
      await new Promise((r) => setTimeout(r, 100));
    }
    await reading;
    controller.abort();
    expect(seen.at(-1)).toMatchObject({ type: 'action_dispatched', id: expect.any(String), data: { tenant: 'streamed', namespace: 'payments' } });
    const refused = await refusal(createSluiceClient({ url: gw.url }).stream().next());
    expect(refused).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });
});

/** A server answering every request with `answer`, counting them; closed by the returned function. */
async function fakeGateway(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; requests: () => number; close: () => void }> {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    answer(req, res);
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () => server.close(),
  };
}

describe('@sluice/client at the edges', () => {
  it('abandons a dispatch when its signal aborts (a gateway that never answers)', async () => {
    const silent = await fakeGateway(() => {});
    try {
      const started = Date.now();
      const err = await createSluiceClient({ url: silent.url })
        .dispatch(sampleAction(), { signal: AbortSignal.timeout(300) })
        .catch((e: unknown) => e);
      expect((err as Error).name).toBe('TimeoutError');
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      silent.close();
    }
  });

  it('gives back at once an answer whose Retry-After is past maxRetryDelayMs; reads only seconds or an HTTP date', async () => {
    let retryAfter = '26';
    const limited = await fakeGateway((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter });
      res.end(JSON.stringify({ error: 'rate limit exceeded', code: 'RATE_LIMITED', retry_after: 26 }));
    });
    try {
      const client = createSluiceClient({ url: limited.url, retries: 1, maxRetryDelayMs: 2000 });
      const started = Date.now();
      expect(await refusal(client.dispatch(sampleAction()))).toMatchObject({ status: 429, code: 'RATE_LIMITED', body: { retry_after: 26 } });
      expect(limited.requests()).toBe(1);
      expect(Date.now() - started).toBeLessThan(1000);
      // Not a number of seconds nor a date: the backoff's 0.5 s, not an immediate retry.
      retryAfter = '-5';
      const again = Date.now();
      await refusal(client.dispatch(sampleAction()));
      expect(limited.requests()).toBe(3);
      expect(Date.now() - again).toBeGreaterThanOrEqual(450);
    } finally {
      limited.close();
    }
  });

  it("says the status when an error's body says nothing (empty, or a proxy's HTML page)", async () => {
    let body = '';
    const proxy = await fakeGateway((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end(body);
    });
    try {
      const client = createSluiceClient({ url: proxy.url });
      expect(await refusal(client.dispatch(sampleAction()))).toMatchObject({ status: 502, code: 'HTTP_502', message: '502 Bad Gateway' });
      body = '<html><body><h1>502 Bad Gateway</h1>nginx</body></html>';
      expect(await refusal(client.dispatch(sampleAction()))).toMatchObject({ message: '502 Bad Gateway' });
    } finally {
      proxy.close();
    }
  });

  it('throws SluiceStreamClosed when the gateway ends the stream (a replica shutting down)', async () => {
    const gw = await startGateway('memory');
    const client = createSluiceClient({ url: gw.url });
    let opened: () => void = () => {};
    const open = new Promise<void>((resolve) => {
      opened = resolve;
    });
    const reading = (async () => {
      for await (const _event of client.stream({}, { onOpen: opened })) {
        // no events: the stream ends first
      }
    })();
    const ended = reading.catch((e: unknown) => e);
    await open;
    gw.readiness.startClosing();
    await gw.close();
    expect(await ended).toBeInstanceOf(SluiceStreamClosed);
  });
});
