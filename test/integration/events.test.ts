import type { InternalEvent } from '@sluice/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, WILDCARD_GRANT } from '../support/credentials.js';
import { poll } from '../support/poll.js';
import { rulesDir } from '../support/rules-dir.js';
import { ALL_BACKENDS, postJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const RULES = `
rules:
  - name: hold-pages-while-acknowledged
    priority: 1
    condition: { all: [ { field: action.action_type, eq: page }, { field: state.current, eq: acknowledged } ] }
    action: { type: suppress, reason: acknowledged }
  - name: track-alerts
    priority: 2
    condition: { field: action.action_type, eq: alert }
    action: { type: state_machine, state_machine: alert, fingerprint_fields: [payload.host] }
  - name: track-tickets
    priority: 3
    condition: { field: action.action_type, eq: ticket }
    action: { type: state_machine, state_machine: ticket }
  - name: track-probes
    priority: 4
    condition: { field: action.action_type, eq: probe }
    action: { type: state_machine, state_machine: probe }
`;

const STATE_MACHINES = [
  {
    name: 'alert',
    initial_state: 'open',
    states: ['open', 'acknowledged', 'resolved'],
    transitions: [
      { from: 'open', to: 'acknowledged', notify: true },
      { from: 'open', to: 'resolved' },
      { from: 'acknowledged', to: 'resolved' },
    ],
  },
  {
    name: 'ticket',
    initial_state: 'new',
    states: ['new', 'stale', 'closed'],
    transitions: [{ from: 'new', to: 'closed' }],
    // A short timeout, so the test waits about a second.
    timeouts: [{ state: 'new', after_seconds: 1, transition_to: 'stale' }],
  },
  // Times out a second after a ticket would: it closes the window in which a duplicate ticket timeout would show.
  { name: 'probe', initial_state: 'new', states: ['new', 'stale'], transitions: [], timeouts: [{ state: 'new', after_seconds: 2, transition_to: 'stale' }] },
];

type Json = Record<string, unknown>;

async function request(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
  const res = await fetch(url, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

describe.each(ALL_BACKENDS)('event state machines through HTTP (%s backend)', (backend) => {
  let gw: RunningGateway;
  const seen: InternalEvent[] = [];
  const tenant = `t-${backend}`;
  const scope = `namespace=payments&tenant=${tenant}`;
  const dispatch = async (over: Json) => (await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant, ...over }))).body as Json;
  const event = (fp: string, query = scope) => request('GET', `${gw.url}/v1/events/${encodeURIComponent(fp)}?${query}`);
  const transition = (fp: string, body: Json) => request('PUT', `${gw.url}/v1/events/${encodeURIComponent(fp)}/transition`, body);

  beforeAll(async () => {
    gw = await startGateway(backend, { rules: { directory: rulesDir({ 'rules.yaml': RULES }) }, state_machines: STATE_MACHINES });
    gw.runtime.events.on((e) => seen.push(e));
  });
  afterAll(() => gw.close());

  it('moves an event by dispatch, and refuses a forbidden move in place, saying so', async () => {
    const first = await dispatch({ action_type: 'alert', payload: { host: 'db-1' } });
    expect(first).toMatchObject({ outcome: 'state_changed', previous_state: 'open', new_state: 'open', notify: false });
    const fp = first.fingerprint as string;
    expect(fp).toMatch(/^[0-9a-f]{64}$/);
    expect(await dispatch({ action_type: 'alert', payload: { host: 'db-1' }, status: 'acknowledged' })).toMatchObject({
      outcome: 'state_changed',
      fingerprint: fp,
      previous_state: 'open',
      new_state: 'acknowledged',
      notify: true,
    });
    expect(await dispatch({ action_type: 'alert', payload: { host: 'db-1' }, status: 'open' })).toMatchObject({
      previous_state: 'acknowledged',
      new_state: 'acknowledged',
      requested_state: 'open',
      reason: 'transition_not_allowed',
    });
    const got = await event(fp);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      fingerprint: fp,
      namespace: 'payments',
      tenant,
      state_machine: 'alert',
      state: 'acknowledged',
      action_type: 'alert',
      transition_count: 1,
      version: 2,
      timeout_at: null,
    });
  });

  it('lets a rule condition read state.current', async () => {
    await dispatch({ action_type: 'alert', fingerprint: 'db-2', status: 'acknowledged' });
    expect(await dispatch({ action_type: 'page', fingerprint: 'db-2' })).toMatchObject({ outcome: 'suppressed', rule: 'hold-pages-while-acknowledged' });
    expect(await dispatch({ action_type: 'page', fingerprint: 'db-3' })).toMatchObject({ outcome: 'executed' });
  });

  it('transitions by PUT: 200 with notify, 409 for a forbidden move, 404 for an unknown event, to_state accepted', async () => {
    await dispatch({ action_type: 'alert', fingerprint: 'put-1' });
    const body = { namespace: 'payments', tenant };
    expect(await transition('put-1', { ...body, to: 'acknowledged' })).toEqual({
      status: 200,
      body: { fingerprint: 'put-1', previous_state: 'open', new_state: 'acknowledged', notify: true },
    });
    const forbidden = await transition('put-1', { ...body, to: 'open' });
    expect(forbidden).toMatchObject({ status: 409, body: { code: 'CONFLICT', error: 'transition not allowed: acknowledged -> open (state machine alert)' } });
    expect(await transition('put-1', { ...body, to: 'nowhere' })).toMatchObject({ status: 409 });
    expect(await transition('put-1', { ...body, to_state: 'resolved' })).toMatchObject({ status: 200, body: { new_state: 'resolved', notify: false } });
    expect(await transition('nope', { ...body, to: 'resolved' })).toMatchObject({ status: 404, body: { error: 'event not found: nope' } });
    expect(await transition('put-1', body)).toMatchObject({ status: 400 });
    expect(await transition('put-1', { ...body, to: 'resolved', extra: 1 })).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
  });

  it('lists a tenant’s events with a status filter and a limit; namespace and tenant are required', async () => {
    for (const fp of ['l-1', 'l-2', 'l-3']) await dispatch({ action_type: 'alert', fingerprint: fp, tenant: `${tenant}-list` });
    await dispatch({ action_type: 'alert', fingerprint: 'l-2', tenant: `${tenant}-list`, status: 'resolved' });
    const q = `namespace=payments&tenant=${tenant}-list`;
    const all = await request('GET', `${gw.url}/v1/events?${q}`);
    expect(all.status).toBe(200);
    expect(all.body.count).toBe(3);
    const open = await request('GET', `${gw.url}/v1/events?${q}&status=open`);
    expect((open.body.events as Json[]).map((e) => e.fingerprint).sort()).toEqual(['l-1', 'l-3']);
    expect((await request('GET', `${gw.url}/v1/events?${q}&status=open&limit=1`)).body.count).toBe(1);
    expect((await request('GET', `${gw.url}/v1/events?tenant=${tenant}`)).status).toBe(400);
    expect((await request('GET', `${gw.url}/v1/events?${q}&limit=0`)).status).toBe(400);
    expect(await event('missing')).toMatchObject({ status: 404, body: { error: 'event not found: missing' } });
    expect((await event('l-1', `tenant=${tenant}-list`)).status).toBe(400);
  });

  it('times an event out once, and a transition before the timeout supersedes it', async () => {
    const before = seen.length;
    await dispatch({ action_type: 'ticket', fingerprint: 'tk-timeout' });
    await dispatch({ action_type: 'ticket', fingerprint: 'tk-closed' });
    expect(await dispatch({ action_type: 'ticket', fingerprint: 'tk-closed', status: 'closed' })).toMatchObject({ new_state: 'closed' });
    // Its timeout falls due a second after the tickets': once it fired, a duplicate run of theirs
    // (there should be none) has had its turn.
    await dispatch({ action_type: 'probe', fingerprint: 'tk-probe' });
    for (const fp of ['tk-timeout', 'tk-probe']) {
      await poll(`the timeout of ${fp}`, async () => (await event(fp)).body.state === 'stale', { intervalMs: 50 });
    }
    const timeouts = seen.slice(before).filter((e) => e.type === 'timeout' && e.data.fingerprint !== 'tk-probe');
    expect(timeouts).toHaveLength(1);
    expect(timeouts[0]).toMatchObject({ tenant, data: { fingerprint: 'tk-timeout', state_machine: 'ticket', previous_state: 'new', new_state: 'stale' } });
    expect((await event('tk-timeout')).body).toMatchObject({ state: 'stale', version: 2, transition_count: 1 });
    expect((await event('tk-closed')).body).toMatchObject({ state: 'closed', version: 2 });
  });
});

describe('event endpoints under auth', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    const { file } = credentialsFile({
      keys: [
        { name: 'admin', role: 'admin', grants: [WILDCARD_GRANT] },
        { name: 'viewer', role: 'viewer', grants: [WILDCARD_GRANT] },
        { name: 'acme-op', role: 'operator', grants: [{ tenants: ['acme'], namespaces: ['*'], actions: ['*'] }] },
      ],
    });
    gw = await startGateway('memory', {
      auth: { enabled: true, file },
      rules: { directory: rulesDir({ 'rules.yaml': RULES }) },
      state_machines: STATE_MACHINES,
    });
    for (const tenant of ['acme', 'globex']) {
      await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant, action_type: 'alert', fingerprint: 'fp' }), keyHeader('admin'));
    }
  });
  afterAll(() => gw.close());

  const put = (key: string, tenant: string) =>
    request('PUT', `${gw.url}/v1/events/fp/transition`, { namespace: 'payments', tenant, to: 'resolved' }, keyHeader(key));

  it('lets a viewer read but not transition', async () => {
    expect((await request('GET', `${gw.url}/v1/events?namespace=payments&tenant=acme`, undefined, keyHeader('viewer'))).body.count).toBe(1);
    expect((await put('viewer', 'acme')).status).toBe(403);
  });

  it('confines a caller to its granted tenants', async () => {
    expect((await request('GET', `${gw.url}/v1/events/fp?namespace=payments&tenant=globex`, undefined, keyHeader('acme-op'))).status).toBe(403);
    expect((await request('GET', `${gw.url}/v1/events?namespace=payments&tenant=globex`, undefined, keyHeader('acme-op'))).status).toBe(403);
    expect((await put('acme-op', 'globex')).status).toBe(403);
    expect(await put('acme-op', 'acme')).toMatchObject({ status: 200, body: { new_state: 'resolved' } });
  });
});
