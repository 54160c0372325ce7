import { createHmac } from 'node:crypto';
import { ManualClock } from '@sluice/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { poll } from '../support/poll.js';
import { openStream, type SseFrame, type SseStream } from '../support/sse-client.js';
import { rulesDir } from '../support/rules-dir.js';
import { ALL_BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const RULES = `
rules:
  - { name: wires-need-approval, priority: 1, condition: { field: action.action_type, eq: wire }, action: { type: require_approval, message: check the amount, ttl_seconds: 3600 } }
  - { name: quick-approval, priority: 2, condition: { field: action.action_type, eq: quick }, action: { type: require_approval, ttl_seconds: 1 } }
  - { name: notified-approval, priority: 3, condition: { field: action.action_type, eq: notified }, action: { type: require_approval, notify_provider: hook } }
`;
const NEW_KEY = { id: 'new', secret: 'aa'.repeat(32) };
const OLD_KEY = { id: 'old', secret: 'bb'.repeat(32) };
const EXTERNAL = 'https://sluice.example';

type Body = Record<string, unknown>;

/** The reference's signing input, recomputed independently of the gateway's code. */
function signWith(secret: string, ns: string, tenant: string, id: string, expiresAt: number): string {
  const field = (v: string) => `${Buffer.byteLength(v)}:${v}`;
  return createHmac('sha256', Buffer.from(secret, 'hex'))
    .update(`${field(ns)}\n${field(tenant)}\n${field(id)}\n${expiresAt}`)
    .digest('hex');
}

describe.each(ALL_BACKENDS)('approvals (%s)', (backend) => {
  let gw: RunningGateway;
  let sink: HttpSink;
  const local = (link: string) => link.replace(EXTERNAL, gw.url);
  const request = async (action_type = 'wire', tenant = 'acme') => {
    const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant, action_type, provider: 'hook' }));
    return res.body as Body & { approval_id: string; approve_url: string; reject_url: string; action_id: string };
  };
  const executedIds = () => sink.received.map((c) => c.id);
  let stream: SseStream;
  const resolvedOf = (approvalId: string) => (f: SseFrame) => f.event === 'approval_resolved' && f.data['approval_id'] === approvalId;

  beforeAll(async () => {
    sink = await startSink();
    gw = await startGateway(backend, {
      providers: [{ name: 'hook', type: 'webhook', url: sink.url }],
      rules: { directory: rulesDir({ 'approvals.yaml': RULES }) },
      server: { external_url: EXTERNAL, approval_keys: [NEW_KEY, OLD_KEY] },
    });
    stream = await openStream(`${gw.url}/v1/stream?event_type=approval_resolved`);
  });
  afterAll(async () => {
    stream.close();
    await gw.close();
    await sink.close();
  });

  it('holds a matching action: pending_approval with signed links, nothing executed', async () => {
    const pending = await request();
    expect(pending).toMatchObject({ outcome: 'pending_approval', approval_id: expect.any(String), notification_sent: false });
    const { approval_id: id } = pending;
    expect(pending.approve_url).toMatch(new RegExp(`^${EXTERNAL}/v1/approvals/payments/acme/${id}/approve\\?sig=[0-9a-f]{64}&expires_at=\\d+&kid=new$`));
    expect(pending.reject_url).toBe(pending.approve_url.replace('/approve?', '/reject?'));
    expect(executedIds()).not.toContain(pending.action_id);
    const health = (await requestJson('GET', `${gw.url}/health`)).body as { metrics: { pending_approval: number } };
    expect(health.metrics.pending_approval).toBeGreaterThan(0);
    const listed = (await requestJson('GET', `${gw.url}/v1/approvals?namespace=payments&tenant=acme`)).body;
    expect(((listed?.approvals as Body[] | undefined) ?? []).map((a) => a.id)).toContain(id);
    expect((await requestJson('GET', `${gw.url}/v1/approvals/payments/acme/${id}`)).body).toMatchObject({
      id,
      status: 'pending',
      rule: 'wires-need-approval',
      message: 'check the amount',
      action_id: pending.action_id,
    });
    // The links are credentials: the trail, readable by viewers, keeps them redacted.
    const record = await requestJson('GET', `${gw.url}/v1/audit/${pending.action_id}`);
    expect(record.body).toMatchObject({
      outcome: 'pending_approval',
      outcome_details: { approval_id: id, approve_url: '[redacted]', reject_url: '[redacted]' },
    });
    expect(JSON.stringify(record.body)).not.toContain('sig=');
  });

  it('approves once: the action executes exactly once; a second decision is 410', async () => {
    const pending = await request();
    const approved = await postJson(local(pending.approve_url), undefined);
    expect(approved).toMatchObject({
      status: 200,
      body: { id: pending.approval_id, status: 'approved', outcome: { outcome: 'executed', action_id: pending.action_id } },
    });
    expect(executedIds().filter((id) => id === pending.action_id)).toHaveLength(1);
    expect(await postJson(local(pending.approve_url), undefined)).toMatchObject({
      status: 410,
      body: { code: 'GONE', error: 'approval already decided: approved' },
    });
    expect((await postJson(local(pending.reject_url), undefined)).status).toBe(410);
    expect(executedIds().filter((id) => id === pending.action_id)).toHaveLength(1);
    expect((await requestJson('GET', `${gw.url}/v1/audit/${pending.action_id}`)).body).toMatchObject({ outcome: 'executed' });
    expect((await stream.next(resolvedOf(pending.approval_id))).data).toMatchObject({ action_id: pending.action_id, decision: 'approved' });
  });

  it('an approval stored by an earlier release, for an action id and a tenant this one refuses, still lists, reads and executes once approved', async () => {
    // The gateway itself, past the HTTP door: what a release that took such ids stored.
    const tenant = 'old\u202eer';
    const held = await gw.runtime.gateway.dispatch({ ...sampleAction({ tenant, action_type: 'wire', provider: 'hook' }), id: '..' });
    expect(held).toMatchObject({ outcome: 'pending_approval' });
    const { approval_id: id, approve_url } = held as unknown as { approval_id: string; approve_url: string };
    const listed = (await requestJson('GET', `${gw.url}/v1/approvals?tenant=${encodeURIComponent(tenant)}`)).body as { approvals: Body[] };
    expect(listed.approvals.map((a) => a.id)).toEqual([id]);
    const read = await requestJson('GET', `${gw.url}/v1/approvals/payments/${encodeURIComponent(tenant)}/${id}`);
    expect(read).toMatchObject({ status: 200, body: { tenant, action: { id: '..' } } });
    expect(await postJson(local(approve_url), undefined)).toMatchObject({ status: 200, body: { status: 'approved', outcome: { outcome: 'executed' } } });
    expect(executedIds().filter((executed) => executed === '..')).toHaveLength(1);
  });

  it('rejects: nothing executes, and a later approve is 410', async () => {
    const pending = await request();
    expect((await postJson(local(pending.reject_url), undefined)).body).toEqual({ id: pending.approval_id, status: 'rejected', outcome: null });
    expect((await postJson(local(pending.approve_url), undefined)).status).toBe(410);
    expect(executedIds()).not.toContain(pending.action_id);
    expect((await stream.next(resolvedOf(pending.approval_id))).data).toMatchObject({
      action_id: pending.action_id,
      decision: 'rejected',
      namespace: 'payments',
      tenant: 'acme',
    });
    // The request and the decision are both in the audit trail under the action's id; the latest is the decision.
    expect((await requestJson('GET', `${gw.url}/v1/audit/${pending.action_id}`)).body).toMatchObject({
      outcome: 'suppressed',
      matched_rule: 'wires-need-approval',
      caller_id: 'link:new',
      outcome_details: { reason: 'approval rejected', approval_id: pending.approval_id, decision: 'rejected' },
    });
    const trail = (await requestJson('GET', `${gw.url}/v1/audit?tenant=acme&namespace=payments&limit=1000`)).body?.records as Body[] | undefined;
    expect(
      (trail ?? [])
        .filter((r) => r.action_id === pending.action_id)
        .map((r) => r.outcome)
        .sort(),
    ).toEqual(['pending_approval', 'suppressed']);
  });

  it('answers 404 to a tampered sig, expires_at or kid, changing nothing', async () => {
    const pending = await request();
    const url = new URL(local(pending.approve_url));
    const variant = (key: string, value: string) => {
      const u = new URL(url);
      u.searchParams.set(key, value);
      return u.toString();
    };
    const sig = url.searchParams.get('sig') ?? '';
    const expires = Number(url.searchParams.get('expires_at'));
    for (const tampered of [
      variant('sig', `${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`),
      variant('expires_at', String(expires + 1)),
      variant('kid', 'old'),
      variant('kid', 'nope'),
      // The same signature and expiry written differently: still a changed link.
      variant('sig', sig.toUpperCase()),
      variant('expires_at', `0${expires}`),
    ]) {
      expect(await postJson(tampered, undefined)).toMatchObject({ status: 404, body: { error: 'approval not found or expired' } });
    }
    expect((await requestJson('GET', `${gw.url}/v1/approvals/payments/acme/${pending.approval_id}`)).body).toMatchObject({ status: 'pending' });
  });

  it('verifies a link signed with an older key while that key is configured (rotation)', async () => {
    const pending = await request();
    const url = new URL(local(pending.approve_url));
    const expires = Number(url.searchParams.get('expires_at'));
    url.searchParams.set('sig', signWith(OLD_KEY.secret, 'payments', 'acme', pending.approval_id, expires));
    url.searchParams.set('kid', 'old');
    expect((await postJson(url.toString(), undefined)).body).toMatchObject({ status: 'approved' });
  });

  it('is a link to POST from outside a browser: a GET (a browser opening it) is 404, a cross-site browser POST 403', async () => {
    const pending = await request();
    expect((await requestJson('GET', local(pending.approve_url))).status).toBe(404);
    expect((await postJson(local(pending.approve_url), undefined, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await postJson(local(pending.reject_url), undefined, { origin: 'https://mail.example' })).status).toBe(403);
    expect((await requestJson('GET', `${gw.url}/v1/approvals/payments/acme/${pending.approval_id}`)).body).toMatchObject({ status: 'pending' });
    expect((await postJson(local(pending.approve_url), undefined, { 'sec-fetch-site': 'same-origin' })).status).toBe(200);
  });

  it('records the key that matched for a link without a kid', async () => {
    const pending = await request();
    const url = new URL(local(pending.reject_url));
    const expires = Number(url.searchParams.get('expires_at'));
    url.searchParams.set('sig', signWith(OLD_KEY.secret, 'payments', 'acme', pending.approval_id, expires));
    url.searchParams.delete('kid');
    expect((await postJson(url.toString(), undefined)).body).toMatchObject({ status: 'rejected' });
    expect((await requestJson('GET', `${gw.url}/v1/approvals/payments/acme/${pending.approval_id}`)).body).toMatchObject({ decided_by: 'link:old' });
    expect((await requestJson('GET', `${gw.url}/v1/audit/${pending.action_id}`)).body).toMatchObject({ outcome: 'suppressed', caller_id: 'link:old' });
  });

  it('settles approve and reject sent together: one decision, at most one execution', async () => {
    for (let i = 0; i < 10; i++) {
      const pending = await request();
      const answers = await Promise.all([postJson(local(pending.approve_url), undefined), postJson(local(pending.reject_url), undefined)]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 410]);
      const approved = answers.some((a) => a.body?.status === 'approved');
      expect(executedIds().filter((id) => id === pending.action_id)).toHaveLength(approved ? 1 : 0);
    }
  });

  it('expires an unanswered approval after ttl_seconds; its links then 404', async () => {
    const pending = await request('quick');
    const status = async () => (await requestJson('GET', `${gw.url}/v1/approvals/payments/acme/${pending.approval_id}`)).body?.status;
    await poll('the approval to expire', status, (s) => s === 'expired', { timeoutMs: 8000, intervalMs: 100 });
    expect((await postJson(local(pending.approve_url), undefined)).status).toBe(404);
    expect(executedIds()).not.toContain(pending.action_id);
    // The expiry job reports it: on the stream, and in the trail (by the gateway, at expires_at).
    expect((await stream.next(resolvedOf(pending.approval_id), 8000)).data).toMatchObject({ decision: 'expired' });
    const expiry = async () => (await requestJson('GET', `${gw.url}/v1/audit/${pending.action_id}`)).body;
    const record = await poll('the expiry audit record', expiry, (r) => r?.outcome === 'suppressed', { timeoutMs: 5000, intervalMs: 100 });
    expect(record).toMatchObject({
      caller_id: 'internal',
      outcome_details: { reason: 'approval expired', approval_id: pending.approval_id, decision: 'expired' },
    });
    // Its deletion is now due in 7 days: a delayed job of its own (run on the gateway clock below).
    const forgetting = async () =>
      (await (await fetch(`${gw.url}/metrics`)).text()).match(/^sluice_queue_jobs\{queue="approval-forget",state="delayed"\} (\d+)$/m)?.[1];
    await poll('the deletion job to be queued', forgetting, (n) => Number(n) >= 1, { timeoutMs: 5000, intervalMs: 100 });
  });

  it('pages the list with limit and offset; count is every match; a limit out of range is 400', async () => {
    for (let i = 0; i < 3; i++) await request('wire', 'paged');
    const list = async (query: string) =>
      (await requestJson('GET', `${gw.url}/v1/approvals?tenant=paged&${query}`)).body as { approvals: { id: string }[]; count: number };
    const [first, rest] = [await list('limit=2'), await list('limit=2&offset=2')];
    expect([first.approvals.length, first.count, rest.approvals.length, rest.count]).toEqual([2, 3, 1, 3]);
    expect(new Set([...first.approvals, ...rest.approvals].map((a) => a.id)).size).toBe(3);
    for (const bad of ['limit=0', 'limit=1001', 'offset=-1']) expect((await requestJson('GET', `${gw.url}/v1/approvals?${bad}`)).status).toBe(400);
  });

  it('stores the approval before notifying: a receiver that follows the link at once finds it', async () => {
    let followed: Promise<number> | undefined;
    sink.delayMs = (call) => {
      const link = call.payload.approval_url;
      // The approved action itself is slow: its outcome is written after the notification flag.
      if (typeof link !== 'string') return 600;
      if (followed === undefined) followed = postJson(local(link), undefined).then((r) => r.status);
      return 300; // the notification is still in flight while the link is followed
    };
    try {
      const pending = await request('notified');
      expect(pending.notification_sent).toBe(true);
      expect(await followed).toBe(200);
      const stored = (await requestJson('GET', `${gw.url}/v1/approvals/payments/acme/${pending.approval_id}`)).body;
      expect(stored).toMatchObject({ status: 'approved', notification_sent: true, outcome: { outcome: 'executed' } });
    } finally {
      sink.delayMs = undefined;
    }
  });

  it('sends a notification carrying both links through notify_provider', async () => {
    const pending = await request('notified');
    expect(pending.notification_sent).toBe(true);
    const note = sink.received.find((c) => c.payload.approval_id === pending.approval_id);
    expect(note?.payload).toMatchObject({ approval_url: pending.approve_url, reject_url: pending.reject_url, action_id: pending.action_id });
  });
});

describe.each(ALL_BACKENDS)('an approval past its expiry with no worker running (%s)', (backend) => {
  it('reads and lists as expired at its expires_at, not as pending until a worker records it', async () => {
    const gw = await startGateway(backend, { rules: { directory: rulesDir({ 'approvals.yaml': RULES }) } }, { worker: false });
    try {
      const pending = (await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant: 'idle', action_type: 'quick' }))).body as Body & {
        approval_id: string;
        expires_at: string;
      };
      const list = async (status: string) =>
        ((await requestJson('GET', `${gw.url}/v1/approvals?tenant=idle&status=${status}`)).body as { approvals: { id: string }[] }).approvals.map((a) => a.id);
      expect(await list('pending')).toEqual([pending.approval_id]);
      await new Promise((r) => setTimeout(r, Date.parse(pending.expires_at) - Date.now() + 50));
      const read = await requestJson('GET', `${gw.url}/v1/approvals/payments/idle/${pending.approval_id}`);
      expect(read.body).toMatchObject({ status: 'expired', decided_at: pending.expires_at });
      expect([await list('pending'), await list('expired')]).toEqual([[], [pending.approval_id]]);
    } finally {
      await gw.close();
    }
  });
});

describe('approvals are deleted 7 days after their links expired (memory, the gateway clock)', () => {
  it('keeps a decided and an expired approval readable for 7 days, then deletes both', async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const sink = await startSink();
    const gw = await startGateway(
      'memory',
      {
        providers: [{ name: 'hook', type: 'webhook', url: sink.url }],
        rules: { directory: rulesDir({ 'approvals.yaml': RULES }) },
        server: { external_url: EXTERNAL },
      },
      { clock },
    );
    try {
      const dispatch = async (action_type: string) =>
        (await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant: 'acme', action_type, provider: 'hook' }))).body as Body & {
          approval_id: string;
          approve_url: string;
        };
      const status = async (id: string) => (await requestJson('GET', `${gw.url}/v1/approvals/payments/acme/${id}`)).status;
      const approved = await dispatch('quick');
      expect((await postJson(approved.approve_url.replace(EXTERNAL, gw.url), undefined)).status).toBe(200);
      const unanswered = await dispatch('quick');
      await clock.advanceAsync(2_000); // both links expire: the unanswered approval moves to expired
      expect((await requestJson('GET', `${gw.url}/v1/approvals/payments/acme/${unanswered.approval_id}`)).body?.status).toBe('expired');
      // A jump (repeating timers fire once, not every period of 7 days): the deletion jobs are one-shot.
      clock.advance(7 * 86_400_000 - 10_000);
      await clock.advanceAsync(0);
      expect([await status(approved.approval_id), await status(unanswered.approval_id)]).toEqual([200, 200]);
      await clock.advanceAsync(20_000);
      await poll(
        'both approvals to be deleted',
        async () => [await status(approved.approval_id), await status(unanswered.approval_id)],
        (s) => s.every((c) => c === 404),
        {
          timeoutMs: 5000,
          intervalMs: 50,
        },
      );
    } finally {
      await gw.close();
      await sink.close();
    }
  });
});
