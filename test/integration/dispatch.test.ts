import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_BACKENDS, postJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A webhook target that records every body and answers with the status queued for it (default 200) and the JSON text `answer` gives (default `{"ok":…}`). */
async function startSink() {
  const received: Record<string, unknown>[] = [];
  const statuses: number[] = [];
  const sink = { answer: undefined as ((action: Record<string, unknown>) => string | undefined) | undefined };
  const server: Server = createServer((req: IncomingMessage, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      const action = JSON.parse(data) as Record<string, unknown>;
      received.push(action);
      const status = statuses.shift() ?? 200;
      res.writeHead(status, { 'content-type': 'application/json', 'x-sink': 'yes' }).end(sink.answer?.(action) ?? JSON.stringify({ ok: status < 300 }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(sink, { url: `http://127.0.0.1:${port}/hook`, received, statuses, close: () => new Promise((r) => server.close(r)) });
}

describe.each(ALL_BACKENDS)('dispatch over HTTP (%s backend)', (backend) => {
  describe('with no providers configured', () => {
    let gw: RunningGateway;
    beforeAll(async () => {
      gw = await startGateway(backend);
    });
    afterAll(() => gw.close());

    it('executes a spec Action with no id or created_at and generates the id', async () => {
      const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction());
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ outcome: 'executed', response: { status: 'success', headers: {} } });
      expect(res.body?.action_id).toMatch(UUID);
      expect(res.body?.response).toHaveProperty('body');
    });

    it('keeps a caller-supplied id', async () => {
      const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ id: 'my-id-1', created_at: '2026-01-01T00:00:00Z' }));
      expect(res.body).toMatchObject({ outcome: 'executed', action_id: 'my-id-1' });
    });

    it('answers a dry run without executing', async () => {
      const res = await postJson(`${gw.url}/v1/dispatch?dry_run=true`, sampleAction());
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ outcome: 'dry_run', verdict: 'allow', matched_rule: null, would_be_provider: 'email' });
    });

    it('dispatches a batch with per-item results in input order', async () => {
      const actions = Array.from({ length: 25 }, (_, i) => sampleAction({ id: `batch-${i}` }));
      const res = await postJson(`${gw.url}/v1/dispatch/batch`, { actions });
      expect(res.status).toBe(200);
      const results = res.body?.results as { status: string; outcome: { action_id: string; outcome: string } }[];
      expect(results.map((r) => r.outcome.action_id)).toEqual(actions.map((_, i) => `batch-${i}`));
      expect(results.every((r) => r.status === 'success' && r.outcome.outcome === 'executed')).toBe(true);
    });

    it('accepts a bare array as the batch body', async () => {
      const res = await postJson(`${gw.url}/v1/dispatch/batch`, [sampleAction({ id: 'bare-1' })]);
      expect(res.body).toMatchObject({ results: [{ status: 'success', outcome: { action_id: 'bare-1' } }] });
    });

    it('refuses a batch over 1000 items and an empty batch', async () => {
      const big = await postJson(`${gw.url}/v1/dispatch/batch`, { actions: Array.from({ length: 1001 }, () => sampleAction()) });
      expect(big.status).toBe(400);
      expect(big.body).toMatchObject({ code: 'VALIDATION_FAILED' });
      const empty = await postJson(`${gw.url}/v1/dispatch/batch`, { actions: [] });
      expect(empty.status).toBe(400);
    });

    it('accepts and echoes a traceparent without failing', async () => {
      const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction(), { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
      expect(res.status).toBe(200);
    });
  });

  describe('with providers configured', () => {
    let gw: RunningGateway;
    let sink: Awaited<ReturnType<typeof startSink>>;
    beforeAll(async () => {
      sink = await startSink();
      gw = await startGateway(backend, {
        providers: [
          { name: 'email', type: 'log' },
          { name: 'hook', type: 'webhook', url: sink.url, headers: { 'x-team': 'core' } },
        ],
        executor: { max_retries: 2, backoff_base_ms: 5, backoff_max_ms: 20 },
      });
    });
    afterAll(async () => {
      await gw.close();
      await sink.close();
    });

    it('echoes through the log provider', async () => {
      const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ id: 'log-1' }));
      expect(res.body).toMatchObject({ outcome: 'executed', response: { status: 'success', body: { provider: 'email', logged: true } } });
    });

    it('posts to a webhook and returns its answer', async () => {
      const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ provider: 'hook', id: 'wh-1', payload: { n: 1 } }));
      expect(res.body).toMatchObject({ outcome: 'executed', action_id: 'wh-1', response: { status: 'success', body: { ok: true } } });
      expect(sink.received.at(-1)).toMatchObject({ id: 'wh-1', namespace: 'payments', tenant: 'acme', action_type: 'send', payload: { n: 1 } });
    });

    it('hands on a JSON answer nested deeper than server.max_json_depth as its text: the call succeeded, and serialising the value would overflow the stack', async () => {
      const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
      // By action id: a batch's items may reach the target in any order.
      sink.answer = (action) => (action['id'] === 'wh-shallow' ? '[[1]]' : String(action['id']).startsWith('wh-deep') ? deep : undefined);
      const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ provider: 'hook', id: 'wh-deep' }));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ outcome: 'executed', response: { status: 'success' } });
      expect((res.body as { response: { body: unknown } }).response.body).toBe(deep);
      const batch = await postJson(`${gw.url}/v1/dispatch/batch`, {
        actions: [sampleAction({ provider: 'hook', id: 'wh-shallow' }), sampleAction({ provider: 'hook', id: 'wh-deep-2' })],
      });
      expect(batch.status).toBe(200);
      expect(batch.body).toMatchObject({
        results: [{ outcome: { action_id: 'wh-shallow', response: { body: [[1]] } } }, { outcome: { action_id: 'wh-deep-2', response: { body: deep } } }],
      });
      sink.answer = undefined;
    });

    it('retries a 5xx and reports failed (HTTP 200) after the last attempt', async () => {
      sink.statuses.push(503, 503, 503);
      const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ provider: 'hook', id: 'wh-fail' }));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ outcome: 'failed', action_id: 'wh-fail', error: { retryable: true, attempts: 3 } });
    });

    it('makes an unknown provider a failed outcome, and a per-item error in a batch', async () => {
      const single = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ provider: 'nope' }));
      expect(single.body).toMatchObject({
        outcome: 'failed',
        error: { code: 'PROVIDER_NOT_FOUND', message: 'Provider not found: nope', retryable: false, attempts: 0 },
      });
      const batch = await postJson(`${gw.url}/v1/dispatch/batch`, { actions: [sampleAction({ id: 'ok-1' }), sampleAction({ provider: 'nope' })] });
      expect(batch.body).toEqual({
        results: [
          expect.objectContaining({ status: 'success', outcome: expect.objectContaining({ action_id: 'ok-1' }) }),
          { status: 'error', error: { message: 'Provider not found: nope', code: 'PROVIDER_NOT_FOUND' } },
        ],
      });
    });
  });
});
