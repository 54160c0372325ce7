import { request as httpRequest, type IncomingMessage } from 'node:http';
import { EventSource } from 'eventsource';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader } from '../support/credentials.js';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { rulesDir } from '../support/rules-dir.js';
import { openStream, type SseFrame, type SseStream } from '../support/sse-client.js';
import { ALL_BACKENDS, postJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const RULES = `
rules:
  - { name: wires, priority: 1, condition: { field: action.action_type, eq: wire }, action: { type: require_approval, ttl_seconds: 600 } }
  - { name: alerts, priority: 2, condition: { field: action.action_type, eq: alert }, action: { type: group, group_by: [tenant], group_wait_seconds: 1 } }
  - { name: two-step, priority: 3, condition: { field: action.action_type, eq: two-step }, action: { type: chain, chain_name: two } }
`;
const WILDCARD = { tenants: ['*'], namespaces: ['*'], actions: ['*'] };
const ACME = { tenants: ['acme'], namespaces: ['*'], actions: ['*'] };
/** Long enough for an event that should not arrive to show up, not a timing assertion. */
const QUIET_MS = 400;
const CAP = 6;

const quiet = () => new Promise((r) => setTimeout(r, QUIET_MS));
const isDispatchOf = (actionId: string) => (f: SseFrame) => f.event === 'action_dispatched' && f.data['action_id'] === actionId;

describe.each(ALL_BACKENDS)('the SSE stream (%s)', (backend) => {
  let gw: RunningGateway;
  let sink: HttpSink;
  let rejecting: HttpSink;
  const streams: SseStream[] = [];
  const open = async (query = '', key = 'root') => {
    const s = await openStream(`${gw.url}/v1/stream${query}`, keyHeader(key));
    streams.push(s);
    return s;
  };
  const dispatch = async (over: Record<string, unknown> = {}, query = '') =>
    (await postJson(`${gw.url}/v1/dispatch${query}`, sampleAction({ provider: 'hook', ...over }), keyHeader('root'))).body as Record<string, unknown> & {
      action_id: string;
    };

  beforeAll(async () => {
    sink = await startSink();
    rejecting = await startSink();
    rejecting.status = 400;
    const { file } = credentialsFile({
      keys: [
        { name: 'root', role: 'admin', grants: [WILDCARD] },
        { name: 'acme-viewer', role: 'viewer', grants: [ACME] },
        { name: 'capped', role: 'viewer', grants: [{ ...ACME, tenants: ['capped'] }] },
      ],
    });
    gw = await startGateway(backend, {
      auth: { enabled: true, file },
      providers: [
        { name: 'hook', type: 'webhook', url: sink.url },
        { name: 'rejecting', type: 'webhook', url: rejecting.url },
      ],
      executor: { max_retries: 0 },
      rules: { directory: rulesDir({ 'stream.yaml': RULES }) },
      chains: {
        definitions: [
          {
            name: 'two',
            steps: [
              { name: 's1', provider: 'hook', action_type: 'a' },
              { name: 's2', provider: 'hook', action_type: 'b' },
            ],
          },
        ],
      },
      server: { max_sse_connections_per_tenant: CAP },
      stream: { max_queued_events: 16 },
    });
  });
  // Each test's streams end with it: they count against their caller's cap.
  afterEach(() => {
    for (const s of streams.splice(0)) s.close();
  });
  afterAll(async () => {
    await gw.close();
    await sink.close();
    await rejecting.close();
  });

  it('sends each dispatch as action_dispatched: unique id, outcome externally tagged, provider body and headers redacted', async () => {
    const s = await open();
    expect(s.status).toBe(200);
    const one = await dispatch();
    const two = await dispatch();
    const frame = await s.next(isDispatchOf(one.action_id));
    expect(frame.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(frame.data).toEqual({
      id: frame.id,
      timestamp: expect.any(String),
      type: 'action_dispatched',
      outcome: { Executed: { status: 'success', body: null, headers: {} } },
      provider: 'hook',
      action_type: 'send',
      action_id: one.action_id,
      namespace: 'payments',
      tenant: 'acme',
    });
    expect((await s.next(isDispatchOf(two.action_id))).id).not.toBe(frame.id);
  });

  it('redacts approval links; emits approval_required; a dry run emits nothing', async () => {
    const s = await open();
    const dry = await dispatch({}, '?dry_run=true');
    const wire = await dispatch({ action_type: 'wire' });
    const frame = await s.next(isDispatchOf(wire.action_id));
    expect(frame.data['outcome']).toMatchObject({ PendingApproval: { approve_url: '[redacted]', reject_url: '[redacted]', approval_id: wire['approval_id'] } });
    await s.next((f) => f.event === 'approval_required' && f.data['approval_id'] === wire['approval_id']);
    await quiet();
    expect(s.frames.some((f) => f.data['action_id'] === dry.action_id)).toBe(false);
  });

  it('applies each filter, AND-ed', async () => {
    const byNamespace = await open('?namespace=billing');
    const byType = await open('?action_type=refund');
    const byOutcome = await open('?outcome=failed');
    const byEvent = await open('?event_type=approval_required');
    const both = await open('?namespace=billing&action_type=refund');
    const billing = await dispatch({ namespace: 'billing' });
    const refund = await dispatch({ action_type: 'refund' });
    const failed = await dispatch({ provider: 'rejecting' });
    const wire = await dispatch({ action_type: 'wire' });
    const billingRefund = await dispatch({ namespace: 'billing', action_type: 'refund' });
    await byEvent.next((f) => f.data['approval_id'] === wire['approval_id']);
    await byOutcome.next(isDispatchOf(failed.action_id));
    await both.next(isDispatchOf(billingRefund.action_id));
    await quiet();
    const ids = (s: SseStream) => s.frames.map((f) => (f.event === 'action_dispatched' ? f.data['action_id'] : f.event));
    expect(ids(byNamespace)).toEqual([billing.action_id, billingRefund.action_id]);
    expect(ids(byType)).toEqual([refund.action_id, billingRefund.action_id]);
    expect(ids(byOutcome)).toEqual([failed.action_id]);
    expect(ids(byEvent)).toEqual(['approval_required']);
    expect(ids(both)).toEqual([billingRefund.action_id]);
  });

  it('a tenant-scoped key sees only its tenants’ events: dispatches, group flushes and chain steps', async () => {
    const mine = await open('', 'acme-viewer');
    const all = await open();
    for (const tenant of ['globex', 'acme']) {
      await dispatch({ tenant, action_type: 'alert' });
      await dispatch({ tenant, action_type: 'two-step' });
    }
    for (const type of ['group_flushed', 'chain_advanced']) {
      await all.next((f) => f.event === type && f.data['tenant'] === 'globex', 10_000);
      await mine.next((f) => f.event === type && f.data['tenant'] === 'acme', 10_000);
    }
    await quiet();
    expect(new Set(mine.frames.map((f) => f.data['tenant']))).toEqual(new Set(['acme']));
    expect(new Set(mine.frames.map((f) => f.event))).toEqual(new Set(['action_dispatched', 'group_flushed', 'chain_advanced']));
  });

  it('caps concurrent connections per tenant: one more is 429 until one closes', async () => {
    const first = await open('', 'capped');
    for (let i = 1; i < CAP; i++) expect((await open('', 'capped')).status).toBe(200);
    const over = await open('', 'capped');
    expect(over.status).toBe(429);
    // retry_after: at the latest when a dead replica's lease (stream.lease_ttl_seconds, 30) runs out.
    expect(over.error).toEqual({ code: 'RATE_LIMITED', error: 'too many concurrent SSE connections for this tenant', retry_after: 30 });
    first.close();
    await expect
      .poll(async () => {
        const again = await open('', 'capped');
        return again.status;
      })
      .toBe(200);
  });

  it('a real EventSource client reads the frames', async () => {
    const es = new EventSource(`${gw.url}/v1/stream?event_type=action_dispatched`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, ...keyHeader('root') } }),
    });
    try {
      const opened = new Promise((resolve) => es.addEventListener('open', resolve));
      await opened;
      const received = new Promise<MessageEvent>((resolve) => es.addEventListener('action_dispatched', resolve));
      const sent = await dispatch();
      const event = await received;
      expect(JSON.parse(event.data as string)).toMatchObject({ action_id: sent.action_id, type: 'action_dispatched' });
      expect(event.lastEventId).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      es.close();
    }
  });

  it('needs credentials; a viewer may subscribe', async () => {
    expect((await openStream(`${gw.url}/v1/stream`)).status).toBe(401);
    expect((await open('', 'acme-viewer')).status).toBe(200);
    expect((await openStream(`${gw.url}/v1/stream?event_type=nope`, keyHeader('root'))).status).toBe(400);
  });
});

// Local scope: events reach the subscriber as they are emitted, so the client is behind by exactly what the test emits.
describe.each(ALL_BACKENDS)('the SSE stream: a slow client (%s)', (backend) => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(backend, { stream: { scope: 'local', max_queued_events: 16 } });
  });
  afterAll(() => gw.close());

  it('a client that stops reading gets lagged {skipped} and then continues from the current position', async () => {
    // A raw request whose body is left unread: the socket backs up and the server queues, then skips.
    const res = await new Promise<IncomingMessage>((resolve) => {
      httpRequest(`${gw.url}/v1/stream?event_type=group_flushed`, resolve).end();
    });
    res.pause();
    const big = 'x'.repeat(16_384);
    const total = 2000;
    for (let i = 0; i < total; i++) {
      gw.runtime.events.emit({ type: 'group_flushed', namespace: 'lag', tenant: 'lag', at: new Date().toISOString(), data: { group_id: `g${i}`, big } });
      if (i % 100 === 0) await new Promise((r) => setImmediate(r));
    }
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      text += chunk;
    });
    res.resume();
    await expect.poll(() => /event: lagged\ndata: \{"skipped":\d+\}/.test(text), { timeout: 10_000 }).toBe(true);
    gw.runtime.events.emit({ type: 'group_flushed', namespace: 'lag', tenant: 'lag', at: new Date().toISOString(), data: { group_id: 'after' } });
    await expect.poll(() => text.includes('"group_id":"after"'), { timeout: 5000 }).toBe(true);
    res.destroy();
    // Every time it fell behind again it got another lagged frame.
    const skipped = [...text.matchAll(/"skipped":(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
    const delivered = [...text.matchAll(/"group_id":"g\d+"/g)].length;
    expect(skipped).toBeGreaterThan(0);
    // Every event was either delivered or counted as skipped: none lost silently, none twice.
    expect(delivered + skipped).toBe(total);
    expect(text.indexOf('event: lagged')).toBeLessThan(text.indexOf('"group_id":"after"'));
  });
});

describe('the SSE stream: keep-alive and off', () => {
  it('sends a keep-alive comment every keep_alive_seconds', async () => {
    const gw = await startGateway('memory', { stream: { keep_alive_seconds: 1 } });
    const s = await openStream(`${gw.url}/v1/stream`);
    try {
      await expect.poll(() => s.comments.filter((c) => c === 'ping').length, { timeout: 3000 }).toBeGreaterThanOrEqual(2);
      expect(s.comments[0]).toBe('connected');
    } finally {
      s.close();
      await gw.close();
    }
  });

  it('answers 503 while stream.enabled is off', async () => {
    const gw = await startGateway('memory', { stream: { enabled: false } });
    try {
      const s = await openStream(`${gw.url}/v1/stream`);
      expect(s.status).toBe(503);
      expect(s.error).toMatchObject({ code: 'FEATURE_DISABLED', error: 'SSE streaming is not enabled' });
    } finally {
      await gw.close();
    }
  });
});
