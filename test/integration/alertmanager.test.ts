import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertFingerprint } from '../../libs/gateway/src/alertmanager/alert-fingerprint.js';
import { ALERTMANAGER_CONFIG, ALERT_MACHINE, ALERT_RULES } from '../support/alertmanager-config.js';
import { rulesDir } from '../support/rules-dir.js';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

type Body = Record<string, unknown>;

/*
 * Alertmanager compatibility over HTTP: Prometheus's alert list and Alertmanager's webhook become
 * actions through alertmanager.routes (one that maps none is refused, not the others), and amtool's silence API works over Sluice
 * silences. The real programs are driven in test/alertmanager/.
 */
describe.each(BACKENDS)('Alertmanager compatibility over HTTP (%s)', (backend) => {
  let gw: RunningGateway;
  const url = (path: string) => `${gw.url}${path}`;
  const get = async (path: string) => requestJson('GET', url(path));
  const auditOf = async (namespace: string, tenant: string) =>
    ((await get(`/v1/audit?namespace=${namespace}&tenant=${tenant}&limit=100`)).body as { records: Body[] }).records;

  beforeAll(async () => {
    gw = await startGateway(backend, {
      rules: { directory: rulesDir({ 'rules.yaml': ALERT_RULES }) },
      state_machines: [ALERT_MACHINE],
      alertmanager: ALERTMANAGER_CONFIG,
    });
  });
  afterAll(() => gw.close());

  it('POST /api/v2/alerts: each alert becomes an action; its fingerprint tracks the event until it resolves', async () => {
    const labels = { alertname: 'DiskFull', team: 'db', cluster: 'eu-1', instance: 'db-1:9100' };
    const startsAt = new Date(Date.now() - 60_000).toISOString();
    const firing = await postJson(url('/api/v2/alerts'), [
      {
        labels,
        annotations: { summary: 'disk 95 % full' },
        startsAt,
        endsAt: new Date(Date.now() + 300_000).toISOString(),
        generatorURL: 'http://prom:9090/graph',
      },
    ]);
    expect(firing.status).toBe(200);
    const fingerprint = alertFingerprint(labels);
    const [record] = await auditOf('monitoring', 'eu-1');
    expect(record).toMatchObject({ namespace: 'monitoring', tenant: 'eu-1', provider: 'email', action_type: 'DiskFull', outcome: 'state_changed' });
    const event = async () => (await get(`/v1/events/${fingerprint}?namespace=monitoring&tenant=eu-1`)).body as Body;
    expect(await event()).toMatchObject({ fingerprint, state: 'firing' });

    // Prometheus sends a resolved alert with endsAt in the past.
    const resolved = await postJson(url('/api/v2/alerts'), [{ labels, startsAt, endsAt: new Date(Date.now() - 1000).toISOString() }]);
    expect(resolved.status).toBe(200);
    expect(await event()).toMatchObject({ fingerprint, state: 'resolved' });
  });

  it('an alert no route takes is refused (400, a JSON string naming it) without holding back the others of the request, which Prometheus would not send again', async () => {
    const before = await auditOf('monitoring', 'main');
    const refused = await postJson(url('/api/v2/alerts'), [
      { labels: { alertname: 'Orphan', team: 'web' } },
      { labels: { alertname: 'Fine', severity: 'page' } },
    ]);
    expect(refused.status).toBe(400);
    expect(typeof refused.body).toBe('string');
    expect(refused.body).toContain('1 of 2 alerts dispatched; refused: 0.labels no alertmanager route takes this alert');
    const after = await auditOf('monitoring', 'main');
    expect(after).toHaveLength(before.length + 1);
    expect(after.filter((r) => !before.some((b) => b.action_id === r.action_id))).toMatchObject([{ action_type: 'page' }]);
    const malformed = await postJson(url('/api/v2/alerts'), [{ annotations: {} }]);
    expect(malformed.status).toBe(400);
    expect(typeof malformed.body).toBe('string');
  });

  it('POST /v1/integrations/alertmanager: a webhook notification (version 4), one result per alert, with the sender’s fingerprint', async () => {
    const alert = (name: string, status: 'firing' | 'resolved') => ({
      status,
      labels: { alertname: name, severity: 'page' },
      annotations: {},
      startsAt: new Date().toISOString(),
      endsAt: '0001-01-01T00:00:00Z',
      generatorURL: '',
      fingerprint: `fp${name.length.toString(16).padStart(14, '0')}`,
    });
    const res = await postJson(url('/v1/integrations/alertmanager'), {
      version: '4',
      groupKey: '{}:{severity="page"}',
      truncatedAlerts: 0,
      status: 'firing',
      receiver: 'sluice',
      groupLabels: { severity: 'page' },
      commonLabels: { severity: 'page' },
      commonAnnotations: {},
      externalURL: 'http://alertmanager:9093',
      alerts: [alert('A', 'firing'), alert('Bee', 'resolved')],
    });
    expect(res.status).toBe(200);
    const results = (res.body as { results: Body[] }).results;
    expect(results).toHaveLength(2);
    const records = await auditOf('monitoring', 'main');
    const ids = results.map((r) => (r.outcome as Body).action_id);
    const mine = records.filter((r) => ids.includes(r.action_id));
    expect(mine.map((r) => r.action_type)).toEqual(['page', 'page']);
    expect(await get('/v1/events/fp00000000000003?namespace=monitoring&tenant=main')).toMatchObject({ status: 200, body: { state: 'resolved' } });
    // An alert no route takes gets an error result in its place; the others are dispatched.
    const mixed = await postJson(url('/v1/integrations/alertmanager'), {
      version: '4',
      groupKey: '{}:{}',
      truncatedAlerts: 0,
      status: 'firing',
      receiver: 'sluice',
      groupLabels: {},
      commonLabels: {},
      commonAnnotations: {},
      externalURL: 'http://alertmanager:9093',
      alerts: [{ ...alert('Orphan', 'firing'), labels: { alertname: 'Orphan', team: 'web' } }, alert('Ok', 'firing')],
    });
    expect(mixed.status).toBe(200);
    expect((mixed.body as { results: Body[] }).results).toMatchObject([
      { status: 'error', error: { code: 'VALIDATION_FAILED', message: expect.stringContaining('0.labels no alertmanager route takes this alert') } },
      { status: 'success', outcome: { action_id: expect.any(String) } },
    ]);
    const wrong = await postJson(url('/v1/integrations/alertmanager'), { version: '3', status: 'firing', receiver: 'x', alerts: [] });
    expect(wrong).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
  });

  it('/api/v2/silences: create, list with a filter, get, suppress, expire — in the configured scope', async () => {
    const now = Date.now();
    const created = await postJson(url('/api/v2/silences'), {
      matchers: [
        { name: 'alertname', value: 'Noisy', isRegex: false, isEqual: true },
        { name: 'instance', value: 'web-.*', isRegex: true },
      ],
      startsAt: new Date(now - 5000).toISOString(),
      endsAt: new Date(now + 3_600_000).toISOString(),
      createdBy: 'amtool',
      comment: 'flapping',
    });
    expect(created.status).toBe(200);
    const id = (created.body as { silenceID: string }).silenceID;
    const listed = (await get(`/api/v2/silences?filter=${encodeURIComponent('alertname="Noisy"')}`)).body as unknown as Body[];
    expect(listed).toEqual([
      {
        id,
        status: { state: 'active' },
        updatedAt: expect.any(String),
        matchers: [
          { name: 'alertname', value: 'Noisy', isRegex: false, isEqual: true },
          { name: 'instance', value: 'web-.*', isRegex: true, isEqual: true },
        ],
        startsAt: expect.any(String),
        endsAt: new Date(now + 3_600_000).toISOString(),
        createdBy: 'anonymous',
        comment: 'flapping',
      },
    ]);
    expect((await get(`/api/v2/silences?filter=${encodeURIComponent('alertname="Other"')}`)).body).toEqual([]);
    expect(await get(`/v1/silences/${id}`)).toMatchObject({
      status: 200,
      body: { namespace: 'monitoring', tenant: 'main', matchers: [{ op: 'equal' }, { op: 'regex' }] },
    });
    const muted = await postJson(
      url('/v1/dispatch'),
      sampleAction({ namespace: 'monitoring', tenant: 'main', action_type: 'x', metadata: { labels: { alertname: 'Noisy', instance: 'web-3' } } }),
    );
    expect(muted.body).toMatchObject({ outcome: 'suppressed', silence_id: id });

    // An update of endsAt and comment keeps the id; a change of matchers makes a new silence.
    const kept = await postJson(url('/api/v2/silences'), {
      ...(listed[0] as Body),
      comment: 'still flapping',
      endsAt: new Date(now + 7_200_000).toISOString(),
    });
    expect(kept.body).toEqual({ silenceID: id });
    const replaced = await postJson(url('/api/v2/silences'), {
      id,
      matchers: [{ name: 'alertname', value: 'Noisy', isRegex: false }],
      startsAt: new Date(now).toISOString(),
      endsAt: new Date(now + 60_000).toISOString(),
      createdBy: 'amtool',
      comment: 'narrower',
    });
    const newId = (replaced.body as { silenceID: string }).silenceID;
    expect(newId).not.toBe(id);
    expect(await get(`/api/v2/silence/${id}`)).toMatchObject({ status: 200, body: { status: { state: 'expired' } } });

    expect((await requestJson('DELETE', url(`/api/v2/silence/${newId}`))).status).toBe(200);
    expect(await get(`/api/v2/silence/${newId}`)).toMatchObject({ status: 200, body: { status: { state: 'expired' } } });
    expect(((await get('/api/v2/silences?active=true&expired=false&pending=false')).body as unknown as Body[]).map((s) => s.id)).not.toContain(newId);
    const missing = await get('/api/v2/silence/0190c4f2-0000-7000-8000-000000000000');
    expect(missing.status).toBe(404);
    expect(typeof missing.body).toBe('string');
    // Refused by the router, before any route: a string all the same.
    for (const path of ['/api/v2/silence/a%ZZ', `/api/v2/silence/${'a'.repeat(1100)}`]) {
      const refused = await get(path);
      expect(refused.status, path).toBe(400);
      expect(typeof refused.body, path).toBe('string');
    }
    const noComment = await postJson(url('/api/v2/silences'), {
      matchers: [{ name: 'a', value: 'b', isRegex: false }],
      startsAt: new Date(now).toISOString(),
      endsAt: new Date(now + 1000).toISOString(),
      createdBy: 'x',
      comment: '',
    });
    expect(noComment.status).toBe(400);
    expect((await get('/api/v2/status')).body).toMatchObject({ cluster: { status: 'disabled' }, versionInfo: { version: expect.any(String) } });
  });

  it('/api/v2/silences refuses what Alertmanager refuses, and a refused change leaves the old silence muting', async () => {
    const now = Date.now();
    const silence = (over: Body) => ({
      matchers: [{ name: 'alertname', value: 'Kept', isRegex: false, isEqual: true }],
      startsAt: new Date(now).toISOString(),
      endsAt: new Date(now + 3_600_000).toISOString(),
      createdBy: 'amtool',
      comment: 'maintenance',
      ...over,
    });
    const id = ((await postJson(url('/api/v2/silences'), silence({}))).body as { silenceID: string }).silenceID;
    // A change Sluice refuses (a window over a year) must not expire the silence it would replace.
    const refused = await postJson(
      url('/api/v2/silences'),
      silence({ id, startsAt: new Date(now + 600_000).toISOString(), endsAt: new Date(now + 9000 * 3_600_000).toISOString() }),
    );
    expect(refused.status).toBe(400);
    expect(await get(`/api/v2/silence/${id}`)).toMatchObject({ status: 200, body: { status: { state: 'active' } } });
    // Matchers that all match the empty string would mute the whole scope; a name that is not a label name could never be filtered.
    for (const matchers of [
      [{ name: 'foo', value: '', isRegex: false, isEqual: true }],
      [{ name: 'env', value: '.*', isRegex: true, isEqual: true }],
      [{ name: 'env', value: 'prod', isRegex: false, isEqual: false }],
      [{ name: 'a b', value: 'x', isRegex: false, isEqual: true }],
    ]) {
      expect((await postJson(url('/api/v2/silences'), silence({ matchers }))).status, JSON.stringify(matchers)).toBe(400);
    }
    // A filter's escaped newline is a newline, as Prometheus's parser reads it.
    const nl = (
      (await postJson(url('/api/v2/silences'), silence({ matchers: [{ name: 'nl', value: 'x\ny', isRegex: false, isEqual: true }] }))).body as {
        silenceID: string;
      }
    ).silenceID;
    const found = (await get(`/api/v2/silences?filter=${encodeURIComponent('nl="x\\ny"')}`)).body as unknown as Body[];
    expect(found.map((s) => s.id)).toEqual([nl]);
    // A window already over says so, whichever way it is given (a past start is moved up to now first).
    const over = await postJson(url('/api/v2/silences'), silence({ startsAt: '2020-01-01T00:00:00Z', endsAt: '2020-01-02T00:00:00Z' }));
    expect(over).toMatchObject({ status: 400, body: 'ends_at must be in the future' });
  });

  it('lists silences in Alertmanager’s order: active ending soonest, pending starting soonest, expired latest ended first', async () => {
    const now = Date.now();
    const make = async (name: string, startIn: number, endIn: number) =>
      (
        (
          await postJson(url('/api/v2/silences'), {
            matchers: [{ name: 'order', value: name, isRegex: false, isEqual: true }],
            startsAt: new Date(now + startIn).toISOString(),
            endsAt: new Date(now + endIn).toISOString(),
            createdBy: 'amtool',
            comment: 'order',
          })
        ).body as { silenceID: string }
      ).silenceID;
    const hour = 3_600_000;
    const ids = {
      activeLate: await make('a2', 0, 3 * hour),
      pendingLate: await make('p2', 2 * hour, 5 * hour),
      expiredFirst: await make('e1', 0, hour),
      activeSoon: await make('a1', 0, 2 * hour),
      pendingSoon: await make('p1', hour, 5 * hour),
      expiredLast: await make('e2', 0, hour),
    };
    for (const id of [ids.expiredFirst, ids.expiredLast]) expect((await requestJson('DELETE', url(`/api/v2/silence/${id}`))).status).toBe(200);
    const ours = new Set(Object.values(ids));
    const listed = ((await get('/api/v2/silences')).body as unknown as Body[]).map((s) => s.id).filter((id) => ours.has(id as string));
    expect(listed).toEqual([ids.activeSoon, ids.activeLate, ids.pendingSoon, ids.pendingLate, ids.expiredLast, ids.expiredFirst]);
  });

  it('drops empty-valued labels before fingerprinting (as Alertmanager), and refuses an alert that ends before it starts', async () => {
    const labels = { alertname: 'EmptyVal', team: 'db', cluster: 'eu-6' };
    expect((await postJson(url('/api/v2/alerts'), [{ labels: { ...labels, extra: '' } }])).status).toBe(200);
    const event = await get(`/v1/events/${alertFingerprint(labels)}?namespace=monitoring&tenant=eu-6`);
    expect(event).toMatchObject({ status: 200, body: { state: 'firing' } });
    // A route matching env "" takes an alert without env, or with it empty, not one with a value.
    const before = (await auditOf('monitoring', 'ops')).length;
    expect(
      (await postJson(url('/api/v2/alerts'), [{ labels: { alertname: 'NoEnv', team: 'ops' } }, { labels: { alertname: 'EmptyEnv', team: 'ops', env: '' } }]))
        .status,
    ).toBe(200);
    expect(await auditOf('monitoring', 'ops')).toHaveLength(before + 2);
    expect((await postJson(url('/api/v2/alerts'), [{ labels: { alertname: 'Prod', team: 'ops', env: 'prod' } }])).status).toBe(400);
    const backwards = await postJson(url('/api/v2/alerts'), [
      { labels: { alertname: 'Backwards', team: 'db', cluster: 'eu-7' }, startsAt: '2026-01-01T09:00:00Z', endsAt: '2026-01-01T08:00:00Z' },
    ]);
    expect(backwards).toMatchObject({ status: 400, body: expect.stringContaining('0.endsAt the alert ends before it starts') });
  });
});
