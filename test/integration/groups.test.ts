import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WILDCARD_GRANT, credentialsFile, keyHeader } from '../support/credentials.js';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { poll } from '../support/poll.js';
import { rulesDir } from '../support/rules-dir.js';
import { ALL_BACKENDS, postJson, sampleAction, startGateway, type RunningGateway, requestJson } from '../support/start-gateway.js';

const RULES = `
rules:
  - name: batch-alerts
    priority: 1
    condition: { field: action.action_type, eq: alert }
    action: { type: group, group_by: [payload.cluster], group_wait_seconds: 1 }
  - name: small-batches
    priority: 2
    condition: { field: action.action_type, eq: burst }
    action: { type: group, group_by: [payload.cluster], group_wait_seconds: 3600, max_group_size: 3 }
  - name: held
    priority: 3
    condition: { field: action.action_type, eq: held }
    action: { type: group, group_by: [metadata.host], group_wait_seconds: 3600, repeat_interval_seconds: 3600 }
`;

type Json = Record<string, unknown>;
type GroupListBody = { total: number; groups: { group_id: string; group_key: string; state: string; event_count: number; tenant: string }[] };
type Payload = { group_id: string; flush_reason: string; events: { action_id: string }[] };

async function call(method: string, url: string, headers: Record<string, string> = {}) {
  const res = await requestJson(method, url, undefined, headers);
  return { status: res.status, body: res.body as Json };
}

describe.each(ALL_BACKENDS)('event groups through HTTP (%s backend)', (backend) => {
  let gw: RunningGateway;
  let sink: HttpSink;
  const dispatch = async (over: Json) => (await postJson(`${gw.url}/v1/dispatch`, sampleAction({ provider: 'hook', ...over }))).body as Json;
  const list = async (query: string) => (await call('GET', `${gw.url}/v1/groups?${query}`)).body as unknown as GroupListBody;
  const notificationsFor = (groupId: string) => sink.received.filter((r) => r.metadata['group_id'] === groupId);

  beforeAll(async () => {
    sink = await startSink();
    gw = await startGateway(backend, {
      rules: { directory: rulesDir({ 'groups.yaml': RULES }) },
      providers: [{ name: 'hook', type: 'webhook', url: sink.url }],
      executor: { max_retries: 0 },
    });
  });
  afterAll(async () => {
    await gw.close();
    await sink.close();
  });

  it('keeps at most 2 MiB of events per group: large payloads push the oldest out, counted as dropped', async () => {
    const tenant = 'heavy';
    const blob = 'x'.repeat(900_000);
    const outcomes: Json[] = [];
    for (let i = 0; i < 3; i++) outcomes.push(await dispatch({ tenant, action_type: 'held', metadata: { host: 'big' }, payload: { i, blob } }));
    expect(outcomes.map((o) => o['group_size'])).toEqual([1, 2, 2]);
    const key = (await list(`tenant=${tenant}`)).groups[0]!.group_key;
    const full = (await call('GET', `${gw.url}/v1/groups/${key}`)).body;
    expect((full['events'] as Json[]).map((e) => e['action_id'])).toEqual([outcomes[1]?.['action_id'], outcomes[2]?.['action_id']]);
    expect(full).toMatchObject({ event_count: 2, dropped_event_count: 1 });
  });

  it('groups events, then sends one consolidated notification after group_wait and deletes the ephemeral group', async () => {
    const tenant = 'wait';
    const outcomes: Json[] = [];
    for (let i = 0; i < 3; i++) outcomes.push(await dispatch({ tenant, action_type: 'alert', payload: { cluster: 'c1', i } }));
    const groupId = outcomes[0]?.['group_id'] as string;
    expect(outcomes.map((o) => [o['outcome'], o['group_id'], o['group_size'], o['notify_at']])).toEqual(
      [1, 2, 3].map((n) => ['grouped', groupId, n, outcomes[0]?.['notify_at']]),
    );

    const listed = await list(`tenant=${tenant}`);
    expect(listed).toMatchObject({ total: 1, groups: [{ group_id: groupId, state: 'pending', event_count: 3, tenant }] });
    const key = listed.groups[0]!.group_key;
    const full = await call('GET', `${gw.url}/v1/groups/${key}`);
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({
      group_id: groupId,
      group_key: key,
      state: 'pending',
      labels: { 'payload.cluster': 'c1' },
      group_wait_seconds: 1,
      repeat_interval_seconds: null,
    });
    expect((full.body['events'] as Json[]).map((e) => e['action_id'])).toEqual(outcomes.map((o) => o['action_id']));

    await poll('the consolidated notification', () => notificationsFor(groupId).length > 0, { timeoutMs: 15_000, intervalMs: 50 });
    const [note] = notificationsFor(groupId);
    expect((note?.payload as unknown as Payload | undefined)?.flush_reason).toBe('group_wait');
    expect((note?.payload as unknown as Payload | undefined)?.events).toHaveLength(3);
    expect(await call('GET', `${gw.url}/v1/groups/${key}`)).toEqual({ status: 404, body: { error: `group not found: ${key}`, code: 'NOT_FOUND' } });
    expect((await list(`tenant=${tenant}`)).total).toBe(0);

    // The next event starts a new cycle: a new group under the same key.
    const next = await dispatch({ tenant, action_type: 'alert', payload: { cluster: 'c1' } });
    expect(next).toMatchObject({ outcome: 'grouped', group_size: 1 });
    expect(next['group_id']).not.toBe(groupId);
    await poll('the second cycle notification', () => notificationsFor(next['group_id'] as string).length > 0, { timeoutMs: 15_000, intervalMs: 50 });
    expect(notificationsFor(groupId)).toHaveLength(1);
  });

  it('flushes early when a group reaches max_group_size', async () => {
    const outcomes: Json[] = [];
    for (let i = 0; i < 3; i++) outcomes.push(await dispatch({ tenant: 'burst', action_type: 'burst', payload: { cluster: 'c9', i } }));
    const groupId = outcomes[0]?.['group_id'] as string;
    expect(outcomes[2]).toMatchObject({ group_id: groupId, group_size: 3 });
    // group_wait is an hour: only the size can have flushed it.
    await poll('the early flush', () => notificationsFor(groupId).length > 0, { timeoutMs: 15_000, intervalMs: 50 });
    expect(notificationsFor(groupId)[0]?.payload as unknown as Payload).toMatchObject({ flush_reason: 'max_group_size' });
  });

  it('DELETE flushes at once and closes the group', async () => {
    const first = await dispatch({ tenant: 'held', action_type: 'held', metadata: { host: 'h1' } });
    await dispatch({ tenant: 'held', action_type: 'held', metadata: { host: 'h1' } });
    const key = (await list('tenant=held')).groups[0]!.group_key;
    const res = await call('DELETE', `${gw.url}/v1/groups/${key}`);
    expect(res).toEqual({ status: 200, body: { group_id: first['group_id'], group_key: key, event_count: 2, status: 'flushed', notified: true } });
    const notes = notificationsFor(first['group_id'] as string);
    expect(notes).toHaveLength(1);
    expect((notes[0]?.payload as unknown as Payload | undefined)?.flush_reason).toBe('deleted');
    expect((await call('GET', `${gw.url}/v1/groups/${key}`)).status).toBe(404);
    expect((await call('DELETE', `${gw.url}/v1/groups/${key}`)).status).toBe(404);
  });

  it('answers 404 for an unknown key and 400 for a bad filter', async () => {
    expect(await call('GET', `${gw.url}/v1/groups/nope`)).toEqual({ status: 404, body: { error: 'group not found: nope', code: 'NOT_FOUND' } });
    expect((await call('GET', `${gw.url}/v1/groups?status=asleep`)).status).toBe(400);
  });
});

describe('event group endpoints and grants', () => {
  let gw: RunningGateway;
  const acme = { tenants: ['acme'], namespaces: ['*'], actions: ['*'] };
  const keys = {
    admin: { name: 'admin', role: 'admin' as const, grants: [WILDCARD_GRANT] },
    viewer: { name: 'viewer', role: 'viewer' as const, grants: [acme] },
    operator: { name: 'operator', role: 'operator' as const, grants: [acme] },
    // acme, but another provider than the groups' (sampleAction's `email`).
    smsViewer: { name: 'sms-viewer', role: 'viewer' as const, grants: [{ ...acme, providers: ['sms'] }] },
    smsOperator: { name: 'sms-operator', role: 'operator' as const, grants: [{ ...acme, providers: ['sms'] }] },
  };
  const as = (name: keyof typeof keys) => keyHeader(keys[name].name);

  beforeAll(async () => {
    const { file } = credentialsFile({ keys: Object.values(keys) });
    gw = await startGateway('memory', { auth: { enabled: true, file }, rules: { directory: rulesDir({ 'groups.yaml': RULES }) } });
    for (const tenant of ['acme', 'globex']) {
      await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant, action_type: 'held', metadata: { host: 'h' } }), as('admin'));
    }
  });
  afterAll(() => gw.close());

  const keyOf = async (tenant: string) =>
    ((await call('GET', `${gw.url}/v1/groups?tenant=${tenant}`, as('admin'))).body as unknown as GroupListBody).groups[0]!.group_key;

  it('lists only the groups a caller is granted', async () => {
    expect(((await call('GET', `${gw.url}/v1/groups`, as('admin'))).body as unknown as GroupListBody).total).toBe(2);
    const seen = (await call('GET', `${gw.url}/v1/groups`, as('viewer'))).body as unknown as GroupListBody;
    expect(seen.groups.map((g) => g.tenant)).toEqual(['acme']);
    expect((await call('GET', `${gw.url}/v1/groups?tenant=globex`, as('viewer'))).status).toBe(403);
    expect((await call('GET', `${gw.url}/v1/groups`)).status).toBe(401);
  });

  it('reads one group only within the grants', async () => {
    expect((await call('GET', `${gw.url}/v1/groups/${await keyOf('acme')}`, as('viewer'))).status).toBe(200);
    expect((await call('GET', `${gw.url}/v1/groups/${await keyOf('globex')}`, as('viewer'))).status).toBe(404);
    // The record holds its events' payloads: a grant on the tenant but not on the group's provider does not show it.
    expect((await call('GET', `${gw.url}/v1/groups/${await keyOf('acme')}`, as('smsViewer'))).status).toBe(404);
  });

  it('DELETE needs the dispatch permission and a grant over the group', async () => {
    expect((await call('DELETE', `${gw.url}/v1/groups/${await keyOf('acme')}`, as('viewer'))).status).toBe(403);
    expect((await call('DELETE', `${gw.url}/v1/groups/${await keyOf('globex')}`, as('operator'))).status).toBe(404);
    // A group it cannot read is unknown to it, whichever part of the tuple its grant misses (a 403 would say the group exists).
    const unreadable = await call('DELETE', `${gw.url}/v1/groups/${await keyOf('acme')}`, as('smsOperator'));
    expect(unreadable).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    const res = await call('DELETE', `${gw.url}/v1/groups/${await keyOf('acme')}`, as('operator'));
    expect(res).toMatchObject({ status: 200, body: { status: 'flushed', notified: true, event_count: 1 } });
  });
});
