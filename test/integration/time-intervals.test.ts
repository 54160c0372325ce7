import { ManualClock } from '@sluice/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rulesDir } from '../support/rules-dir.js';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const RULES = `
rules:
  - name: muted-at-night
    priority: 1
    condition: { field: action.action_type, eq: nightly }
    action: { type: allow }
    mute_time_intervals: [night]
  - name: business-only
    priority: 2
    condition: { field: action.action_type, eq: biz }
    action: { type: allow }
    active_time_intervals: [business-hours]
  - name: ghost-mute
    priority: 3
    condition: { field: action.action_type, eq: ghost-mute }
    action: { type: allow }
    mute_time_intervals: [no-such-interval]
  - name: ghost-active
    priority: 4
    condition: { field: action.action_type, eq: ghost-active }
    action: { type: allow }
    active_time_intervals: [no-such-interval]
  - name: throttled-by-day
    priority: 5
    condition: { field: action.action_type, eq: counted }
    action: { type: throttle, max_count: 1, window_seconds: 3600 }
    mute_time_intervals: [night]
`;

/** Monday 2 March 2026, 12:00 UTC (07:00 in New York, EST). */
const MONDAY_NOON = Date.UTC(2026, 2, 2, 12, 0);

const NIGHT = {
  name: 'night',
  namespace: 'payments',
  tenant: 'acme',
  time_ranges: [{ times: [{ start: '22:00', end: '24:00' }] }, { times: [{ start: '00:00', end: '06:00' }] }],
};
const BUSINESS = {
  name: 'business-hours',
  namespace: 'payments',
  tenant: 'acme',
  location: 'America/New_York',
  time_ranges: [{ weekdays: [{ start: 1, end: 5 }], times: [{ start: '09:00', end: '17:00' }] }],
  description: 'New York office hours',
};

type Body = Record<string, unknown>;

describe.each(BACKENDS)('time intervals over HTTP (%s)', (backend) => {
  let gw: RunningGateway;
  const clock = new ManualClock(MONDAY_NOON);
  const url = (path: string) => `${gw.url}${path}`;
  const dispatch = async (action_type: string, over: Body = {}, query = '') =>
    (await postJson(url(`/v1/dispatch${query}`), sampleAction({ action_type, ...over }))).body as Body;

  beforeAll(async () => {
    gw = await startGateway(backend, { rules: { directory: rulesDir({ 'intervals.yaml': RULES }) } }, { clock });
    for (const interval of [NIGHT, BUSINESS]) expect((await postJson(url('/v1/time-intervals'), interval)).status).toBe(201);
  });
  afterAll(() => gw.close());

  it('creates (201, matches_now), lists, reads, replaces and deletes an interval; a duplicate name in the scope is 409', async () => {
    const body = { name: 'lunch', namespace: 'payments', tenant: 'acme', time_ranges: [{ times: [{ start: '12:00', end: '13:00' }] }] };
    const created = await postJson(url('/v1/time-intervals'), body);
    expect(created).toMatchObject({ status: 201, body: { ...body, location: 'UTC', created_by: 'anonymous', matches_now: true } });
    expect(await postJson(url('/v1/time-intervals'), body)).toMatchObject({ status: 409, body: { error: 'time interval already exists: lunch' } });
    // The same name in another scope is another interval.
    expect((await postJson(url('/v1/time-intervals'), { ...body, tenant: 'globex' })).status).toBe(201);
    const scope = '?namespace=payments&tenant=acme';
    expect((await requestJson('GET', url(`/v1/time-intervals/lunch${scope}`))).body).toMatchObject({ name: 'lunch', matches_now: true });
    const listed = await requestJson('GET', url('/v1/time-intervals?namespace=payments&tenant=acme'));
    expect(listed.body).toMatchObject({ count: 3 });
    expect(((listed.body?.time_intervals as Body[] | undefined) ?? []).map((i) => i.name)).toEqual(['night', 'business-hours', 'lunch']);
    const replaced = await requestJson('PUT', url(`/v1/time-intervals/lunch${scope}`), {
      time_ranges: [{ times: [{ start: '13:00', end: '14:00' }] }],
      description: 'late lunch',
    });
    expect(replaced).toMatchObject({
      status: 200,
      body: { description: 'late lunch', matches_now: false, time_ranges: [{ times: [{ start: '13:00', end: '14:00' }] }] },
    });
    expect((await requestJson('DELETE', url(`/v1/time-intervals/lunch${scope}`))).status).toBe(204);
    expect(await requestJson('GET', url(`/v1/time-intervals/lunch${scope}`))).toMatchObject({
      status: 404,
      body: { error: 'time interval not found: payments/acme/lunch' },
    });
    expect((await requestJson('DELETE', url('/v1/time-intervals/lunch?namespace=payments&tenant=globex'))).status).toBe(204);
  });

  it.each([
    ['25:00', { time_ranges: [{ times: [{ start: '09:00', end: '25:00' }] }] }],
    ['an empty window', { time_ranges: [{ times: [{ start: '10:00', end: '10:00' }] }] }],
    ['weekday 8', { time_ranges: [{ weekdays: [{ start: 1, end: 8 }] }] }],
    ['an unknown zone', { location: 'Mars/Olympus' }],
    ['no ranges', { time_ranges: [] }],
  ])('refuses %s with a 400', async (_name, over) => {
    const res = await postJson(url('/v1/time-intervals'), { name: 'bad', namespace: 'payments', tenant: 'acme', time_ranges: [{}], ...over });
    expect(res).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
    expect((await requestJson('GET', url('/v1/time-intervals/bad?namespace=payments&tenant=acme'))).status).toBe(404);
  });

  it('needs the scope to read one interval', async () => {
    expect((await requestJson('GET', url('/v1/time-intervals/night'))).status).toBe(400);
  });

  it('suppresses a rule with mute_time_intervals inside the window, executes outside; the audit record names the interval', async () => {
    clock.set(MONDAY_NOON);
    expect(await dispatch('nightly')).toMatchObject({ outcome: 'executed' });
    clock.set(Date.UTC(2026, 2, 2, 23, 30));
    const muted = await dispatch('nightly');
    expect(muted).toEqual({ outcome: 'suppressed', action_id: expect.any(String), rule: 'muted-at-night', interval: 'night', reason: 'mute_time_interval' });
    const audit = await requestJson('GET', url(`/v1/audit/${muted.action_id as string}`));
    expect(audit.body).toMatchObject({
      outcome: 'suppressed',
      matched_rule: 'muted-at-night',
      outcome_details: { interval: 'night', reason: 'mute_time_interval' },
    });
    clock.set(Date.UTC(2026, 2, 3, 5, 59));
    expect(await dispatch('nightly')).toMatchObject({ outcome: 'suppressed', interval: 'night' });
    clock.set(Date.UTC(2026, 2, 3, 6, 0));
    expect(await dispatch('nightly')).toMatchObject({ outcome: 'executed' });
    // A child tenant resolves the name in its parent's scope; another tenant does not have it.
    clock.set(Date.UTC(2026, 2, 2, 23, 30));
    expect(await dispatch('nightly', { tenant: 'acme.eu' })).toMatchObject({ outcome: 'suppressed', interval: 'night' });
    expect(await dispatch('nightly', { tenant: 'globex' })).toMatchObject({ outcome: 'executed' });
  });

  it('mutes before the rule action takes anything: a muted action uses no throttle slot', async () => {
    clock.set(Date.UTC(2026, 2, 4, 23, 0));
    expect(await dispatch('counted')).toMatchObject({ outcome: 'suppressed', interval: 'night' });
    clock.set(Date.UTC(2026, 2, 5, 12, 0));
    expect(await dispatch('counted')).toMatchObject({ outcome: 'executed' });
    expect(await dispatch('counted')).toMatchObject({ outcome: 'throttled' });
  });

  it('runs a rule with active_time_intervals only inside them, in the interval’s time zone across the DST change', async () => {
    const at = async (ms: number) => {
      clock.set(ms);
      return (await dispatch('biz')).outcome;
    };
    expect(await at(MONDAY_NOON)).toBe('suppressed'); // 07:00 EST
    expect(await at(Date.UTC(2026, 2, 2, 13, 59))).toBe('suppressed'); // 08:59 EST
    expect(await at(Date.UTC(2026, 2, 2, 14, 0))).toBe('executed'); // 09:00 EST
    // Summer time from 8 March 2026: 09:00 EDT is 13:00 UTC.
    expect(await at(Date.UTC(2026, 2, 9, 12, 59))).toBe('suppressed');
    expect(await at(Date.UTC(2026, 2, 9, 13, 0))).toBe('executed');
    expect(await at(Date.UTC(2026, 2, 9, 20, 59))).toBe('executed'); // 16:59 EDT
    expect(await at(Date.UTC(2026, 2, 9, 21, 0))).toBe('suppressed');
    // Saturday.
    expect(await at(Date.UTC(2026, 2, 14, 15, 0))).toBe('suppressed');
    clock.set(MONDAY_NOON);
    expect(await dispatch('biz')).toMatchObject({ outcome: 'suppressed', rule: 'business-only', interval: 'business-hours', reason: 'active_time_interval' });
  });

  it('ignores an unknown mute interval, counts an unknown active interval as outside, and reports both at reload and in the playground', async () => {
    clock.set(Date.UTC(2026, 2, 2, 14, 0));
    expect(await dispatch('ghost-mute')).toMatchObject({ outcome: 'executed' });
    expect(await dispatch('ghost-active')).toMatchObject({ outcome: 'suppressed', interval: 'no-such-interval', reason: 'active_time_interval' });
    const reload = await postJson(url('/v1/rules/reload'), {});
    const errors = (reload.body?.errors as Body[] | undefined) ?? [];
    expect(errors.map((e) => e.rule).sort()).toEqual(['ghost-active', 'ghost-mute']);
    expect(errors.find((e) => e.rule === 'ghost-mute')).toMatchObject({
      file: expect.stringMatching(/^yaml:.*intervals\.yaml$/),
      message: 'mute_time_intervals: no time interval named "no-such-interval" exists; ignored until one is created',
    });
    const played = await postJson(url('/v1/rules/evaluate'), { ...sampleAction({ action_type: 'ghost-active' }) });
    expect(played.body).toMatchObject({
      verdict: 'allow',
      matched_rule: 'ghost-active',
      muted_by: { interval: 'no-such-interval', reason: 'active_time_interval' },
      unknown_intervals: [
        { rule: 'ghost-mute', field: 'mute_time_intervals', interval: 'no-such-interval' },
        { rule: 'ghost-active', field: 'active_time_intervals', interval: 'no-such-interval' },
      ],
    });
  });

  it('documents silences and time intervals in the OpenAPI document', async () => {
    const doc = (await requestJson('GET', url('/api-doc/openapi.json'))).body as { paths: Record<string, Record<string, unknown>>; tags: { name: string }[] };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/silences',
        '/v1/silences/{id}',
        '/v1/silences/{id}/expire',
        '/v1/silences/{id}/extend',
        '/v1/time-intervals',
        '/v1/time-intervals/{name}',
      ]),
    );
    expect(Object.keys(doc.paths['/v1/silences/{id}'] ?? {}).sort()).toEqual(['delete', 'get', 'put']);
    expect(Object.keys(doc.paths['/v1/time-intervals/{name}'] ?? {}).sort()).toEqual(['delete', 'get', 'put']);
    expect(doc.tags.map((t) => t.name)).toEqual(expect.arrayContaining(['silences', 'time-intervals']));
  });

  it('reports the interval in a dry run, changing nothing', async () => {
    clock.set(Date.UTC(2026, 2, 2, 23, 0));
    const dry = await dispatch('nightly', {}, '?dry_run=true');
    expect(dry).toMatchObject({ outcome: 'dry_run', verdict: 'allow', matched_rule: 'muted-at-night', interval: 'night', reason: 'mute_time_interval' });
    expect((await requestJson('GET', url(`/v1/audit/${dry.action_id as string}`))).status).toBe(404);
  });
});
