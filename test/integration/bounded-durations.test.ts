import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@sluice/config';
import { ManualClock } from '@sluice/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rulesDir } from '../support/rules-dir.js';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

/*
 * Issue 18 item 9, "Unbounded durations": every duration and count of a rule, quota, retention
 * policy, recurring action, silence, time interval and chain has a documented maximum. At the
 * maximum the request is accepted; one past it is a 400 whose message names the field and the
 * limit. A rule at the maximum then dispatches (it used to answer 500 past the range of a Date).
 */

type Body = Record<string, unknown>;
type Response = Awaited<ReturnType<typeof requestJson>>;

const DAY = 86_400;
const WAIT = 30 * DAY; // rule TTLs, windows and waits; a chain's timeout
const STEP_DELAY = 7 * DAY;
const SILENCE = 365 * DAY;
const RETENTION = 10 * 365 * DAY;
const ACTIONS = 1_000_000_000;
const GROUP_SIZE = 1000;
const EXECUTIONS = 10_000_000;
const CHAIN_STEPS = 64;
const RANGES = 64;

const T0 = Date.UTC(2026, 2, 2, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

interface Api {
  call(method: string, path: string, body?: unknown): Promise<Response>;
  /** A fresh suffix, so each request names its own rule, tenant or definition. */
  tag(): string;
}

interface Case {
  /** What the message must name. */
  field: string;
  max: number;
  send(api: Api, value: number): Promise<Response>;
}

const never = (tag: string) => ({ field: 'action.action_type', eq: `never-${tag}` });
/** Marks the field a case varies. */
const VALUE = Symbol('value');
/** A rule with `action`, VALUE replaced by the value under test. */
const rule = (action: Body) => (api: Api, value: number) => {
  const tag = api.tag();
  const body = Object.fromEntries(Object.entries(action).map(([k, v]) => [k, v === VALUE ? value : v]));
  return api.call('POST', '/v1/rules', { name: `bounded-${tag}`, condition: never(tag), action: body });
};

const scope = (api: Api) => ({ namespace: 'bounds', tenant: `t-${api.tag()}` });
const recurringBody = { cron_expr: '0 9 * * *', provider: 'email', action_type: 'send', payload: {} };
const step = (i: number) => ({ name: `s${i}`, provider: 'email', action_type: 'send' });

const CASES: Record<string, Case> = {
  'rule deduplicate.ttl_seconds': { field: 'action.ttl_seconds', max: WAIT, send: rule({ type: 'deduplicate', ttl_seconds: VALUE }) },
  'rule throttle.window_seconds': { field: 'action.window_seconds', max: WAIT, send: rule({ type: 'throttle', max_count: 5, window_seconds: VALUE }) },
  'rule throttle.max_count': { field: 'action.max_count', max: ACTIONS, send: rule({ type: 'throttle', max_count: VALUE, window_seconds: 60 }) },
  'rule group.group_wait_seconds': {
    field: 'action.group_wait_seconds',
    max: WAIT,
    send: rule({ type: 'group', group_by: ['tenant'], group_wait_seconds: VALUE }),
  },
  'rule group.group_interval_seconds': {
    field: 'action.group_interval_seconds',
    max: WAIT,
    send: rule({ type: 'group', group_by: ['tenant'], group_wait_seconds: 0, group_interval_seconds: VALUE }),
  },
  'rule group.repeat_interval_seconds': {
    field: 'action.repeat_interval_seconds',
    max: WAIT,
    send: rule({ type: 'group', group_by: ['tenant'], group_wait_seconds: 0, repeat_interval_seconds: VALUE }),
  },
  'rule group.max_group_size': {
    field: 'action.max_group_size',
    max: GROUP_SIZE,
    send: rule({ type: 'group', group_by: ['tenant'], group_wait_seconds: 0, max_group_size: VALUE }),
  },
  'rule require_approval.ttl_seconds': { field: 'action.ttl_seconds', max: WAIT, send: rule({ type: 'require_approval', ttl_seconds: VALUE }) },
  'rule request_approval.timeout_seconds (alias)': {
    field: 'action.timeout_seconds',
    max: WAIT,
    send: rule({ type: 'request_approval', timeout_seconds: VALUE }),
  },

  'quota max_actions (POST)': {
    field: 'max_actions',
    max: ACTIONS,
    send: (api, value) => api.call('POST', '/v1/quotas', { ...scope(api), max_actions: value, window: 'daily' }),
  },
  'quota max_actions (PUT)': {
    field: 'max_actions',
    max: ACTIONS,
    async send(api, value) {
      const created = await api.call('POST', '/v1/quotas', { ...scope(api), max_actions: 10, window: 'daily' });
      return api.call('PUT', `/v1/quotas/${created.body?.id as string}`, { max_actions: value });
    },
  },

  ...Object.fromEntries(
    (['audit_ttl_seconds', 'state_ttl_seconds', 'event_ttl_seconds'] as const).map((field) => [
      `retention ${field} (POST)`,
      { field, max: RETENTION, send: (api: Api, value: number) => api.call('POST', '/v1/retention', { ...scope(api), [field]: value }) },
    ]),
  ),
  'retention audit_ttl_seconds (PUT)': {
    field: 'audit_ttl_seconds',
    max: RETENTION,
    async send(api, value) {
      const created = await api.call('POST', '/v1/retention', { ...scope(api), audit_ttl_seconds: 60 });
      return api.call('PUT', `/v1/retention/${created.body?.id as string}`, { audit_ttl_seconds: value });
    },
  },

  'recurring max_executions (POST)': {
    field: 'max_executions',
    max: EXECUTIONS,
    send: (api, value) => api.call('POST', '/v1/recurring', { ...scope(api), ...recurringBody, max_executions: value }),
  },
  'recurring max_executions (PUT)': {
    field: 'max_executions',
    max: EXECUTIONS,
    async send(api, value) {
      const where = scope(api);
      const created = await api.call('POST', '/v1/recurring', { ...where, ...recurringBody });
      const query = `?namespace=${where.namespace}&tenant=${where.tenant}`;
      return api.call('PUT', `/v1/recurring/${created.body?.recurring_id as string}${query}`, { max_executions: value });
    },
  },

  'silence duration_seconds': {
    field: 'duration_seconds',
    max: SILENCE,
    send: (api, value) =>
      api.call('POST', '/v1/silences', { ...scope(api), matchers: [{ name: 'env', value: 'prod' }], comment: 'c', duration_seconds: value }),
  },
  'silence ends_at − starts_at (seconds)': {
    field: 'ends_at',
    max: SILENCE,
    send: (api, value) =>
      api.call('POST', '/v1/silences', {
        ...scope(api),
        matchers: [{ name: 'env', value: 'prod' }],
        comment: 'c',
        starts_at: iso(T0 + DAY * 1000),
        ends_at: iso(T0 + DAY * 1000 + value * 1000),
      }),
  },
  'silence starts_at − now (seconds)': {
    field: 'starts_at',
    max: SILENCE,
    send: (api, value) =>
      api.call('POST', '/v1/silences', {
        ...scope(api),
        matchers: [{ name: 'env', value: 'prod' }],
        comment: 'c',
        starts_at: iso(T0 + value * 1000),
        duration_seconds: 60,
      }),
  },
  'silence PUT ends_at − starts_at (seconds)': {
    field: 'ends_at',
    max: SILENCE,
    async send(api, value) {
      const created = await api.call('POST', '/v1/silences', { ...scope(api), matchers: [{ name: 'env', value: 'prod' }], comment: 'c', duration_seconds: 60 });
      return api.call('PUT', `/v1/silences/${created.body?.id as string}`, { ends_at: iso(T0 + value * 1000) });
    },
  },

  'chain timeout_seconds': {
    field: 'timeout_seconds',
    max: WAIT,
    send: (api, value) => api.call('POST', '/v1/chains/definitions', { name: `c-${api.tag()}`, timeout_seconds: value, steps: [step(0)] }),
  },
  'chain step delay_seconds': {
    field: 'steps.0.delay_seconds',
    max: STEP_DELAY,
    send: (api, value) => api.call('POST', '/v1/chains/definitions', { name: `c-${api.tag()}`, steps: [{ ...step(0), delay_seconds: value }] }),
  },
  'chain steps (count)': {
    field: 'steps',
    max: CHAIN_STEPS,
    send: (api, value) => api.call('POST', '/v1/chains/definitions', { name: `c-${api.tag()}`, steps: Array.from({ length: value }, (_, i) => step(i)) }),
  },

  'time interval time_ranges (count)': {
    field: 'time_ranges',
    max: RANGES,
    send: (api, value) =>
      api.call('POST', '/v1/time-intervals', { name: `i-${api.tag()}`, ...scope(api), time_ranges: Array.from({ length: value }, () => ({})) }),
  },
  'time interval weekdays (count)': {
    field: 'time_ranges.0.weekdays',
    max: RANGES,
    send: (api, value) =>
      api.call('POST', '/v1/time-intervals', {
        name: `i-${api.tag()}`,
        ...scope(api),
        time_ranges: [{ weekdays: Array.from({ length: value }, () => ({ start: 1, end: 5 })) }],
      }),
  },
  'time interval years.end': {
    field: 'time_ranges.0.years.0.end',
    max: 9999,
    send: (api, value) =>
      api.call('POST', '/v1/time-intervals', { name: `i-${api.tag()}`, ...scope(api), time_ranges: [{ years: [{ start: 2026, end: value }] }] }),
  },
};

const RULE_FILE = `rules:
  - { name: file-at-max, condition: { field: action.action_type, eq: never-file }, action: { type: group, group_by: [tenant], group_wait_seconds: ${WAIT} } }
  - { name: file-over-max, condition: { field: action.action_type, eq: never-file }, action: { type: group, group_by: [tenant], group_wait_seconds: ${WAIT + 1} } }
`;

describe.each(BACKENDS)('bounded durations and counts (%s)', (backend) => {
  let gw: RunningGateway;
  let n = 0;
  const clock = new ManualClock(T0);
  const api: Api = {
    call: (method, path, body) => requestJson(method, `${gw.url}${path}`, body),
    tag: () => `${backend}-${++n}`,
  };
  const dispatch = async (action_type: string) => postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant: `d-${api.tag()}`, action_type }));

  beforeAll(async () => {
    gw = await startGateway(
      backend,
      {
        providers: [{ name: 'email', type: 'noop' }],
        rules: { directory: rulesDir({ 'limits.yaml': RULE_FILE }) },
        background: { enable_retention_reaper: false },
      },
      { clock },
    );
  });
  afterAll(() => gw.close());

  it.each(Object.entries(CASES))('%s: the maximum is accepted, one more is a 400 naming the field and the limit', async (_name, c) => {
    const atMax = await c.send(api, c.max);
    expect(atMax.status, JSON.stringify(atMax.body)).toBeLessThan(300);
    const over = await c.send(api, c.max + 1);
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    const error = over.body?.error as string;
    expect(error).toContain(c.field);
    expect(error).toContain(String(c.max));
  });

  it('the reproduction: group_wait_seconds 9007199254740991 is a 400, not a rule whose dispatches answer 500', async () => {
    const refused = await api.call('POST', '/v1/rules', {
      name: 'huge-wait',
      condition: { field: 'action.action_type', eq: 'huge' },
      action: { type: 'group', group_by: ['tenant'], group_wait_seconds: 9007199254740991 },
    });
    expect(refused).toMatchObject({
      status: 400,
      body: { code: 'VALIDATION_FAILED', error: `request validation failed: action.group_wait_seconds must be <= ${WAIT} (30 days)` },
    });
    expect((await api.call('GET', '/v1/rules/huge-wait')).status).toBe(404);
    expect((await dispatch('huge')).body).toMatchObject({ outcome: 'executed' });
  });

  it('rules at every maximum dispatch (2xx, never 500), with due times 30 days ahead', async () => {
    const at = (name: string, action: Body) => api.call('POST', '/v1/rules', { name, condition: { field: 'action.action_type', eq: name }, action });
    expect(
      (
        await at('max-group', {
          type: 'group',
          group_by: ['tenant'],
          group_wait_seconds: WAIT,
          group_interval_seconds: WAIT,
          repeat_interval_seconds: WAIT,
          max_group_size: GROUP_SIZE,
        })
      ).status,
    ).toBe(201);
    expect((await at('max-dedup', { type: 'deduplicate', ttl_seconds: WAIT })).status).toBe(201);
    expect((await at('max-throttle', { type: 'throttle', max_count: ACTIONS, window_seconds: WAIT })).status).toBe(201);
    expect((await at('max-approval', { type: 'require_approval', ttl_seconds: WAIT })).status).toBe(201);

    const grouped = await dispatch('max-group');
    expect(grouped).toMatchObject({ status: 200, body: { outcome: 'grouped', group_size: 1, notify_at: iso(T0 + WAIT * 1000) } });
    for (const type of ['max-dedup', 'max-throttle']) expect(await dispatch(type)).toMatchObject({ status: 200, body: { outcome: 'executed' } });
    const pending = await dispatch('max-approval');
    expect(pending).toMatchObject({ status: 200, body: { outcome: 'pending_approval' } });
    const approvals = (await api.call('GET', '/v1/approvals?namespace=payments')).body?.approvals as Body[];
    expect(approvals.find((a) => a.id === pending.body?.approval_id)).toMatchObject({ expires_at: iso(T0 + WAIT * 1000) });
  });

  it('a silence is extended by at most 525600 minutes, and never to more than a year ahead', async () => {
    const created = await CASES['silence duration_seconds']!.send(api, 60);
    const id = created.body?.id as string;
    const extend = (minutes: number) => api.call('POST', `/v1/silences/${id}/extend`, { minutes });
    expect(await extend(SILENCE / 60 + 1)).toMatchObject({
      status: 400,
      body: { code: 'VALIDATION_FAILED', error: expect.stringMatching(/minutes must be <= 525600/) },
    });
    // 60 s left plus a year less one minute: ends exactly a year from now.
    expect(await extend(SILENCE / 60 - 1)).toMatchObject({ status: 200, body: { ends_at: iso(T0 + SILENCE * 1000) } });
    expect(await extend(1)).toMatchObject({
      status: 400,
      body: { code: 'VALIDATION_FAILED', error: expect.stringMatching(/minutes would put ends_at more than 31536000 seconds \(1 year\)/) },
    });
  });

  it('a rule file: the rule at the maximum loads, the one past it does not, and reload names its field and the limit', async () => {
    expect((await api.call('GET', '/v1/rules/file-at-max')).status).toBe(200);
    expect((await api.call('GET', '/v1/rules/file-over-max')).status).toBe(404);
    const reload = await api.call('POST', '/v1/rules/reload');
    expect(reload.body?.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ rule: 'file-over-max', message: expect.stringMatching(new RegExp(`action\\.group_wait_seconds.*<= ${WAIT}`)) }),
      ]),
    );
  });

  it('the OpenAPI document carries the maxima', async () => {
    const doc = (await api.call('GET', '/api-doc/openapi.json')).body as { paths: Record<string, Record<string, Body>> };
    type Schema = { properties: Record<string, Body> };
    const body = (path: string, method: string): Schema => {
      const requestBody = doc.paths[path]?.[method]?.requestBody as { content: Record<string, { schema: Schema }> } | undefined;
      const schema = requestBody?.content['application/json']?.schema;
      if (!schema) throw new Error(`no JSON request body for ${method} ${path}`);
      return schema;
    };
    expect(body('/v1/quotas', 'post').properties.max_actions).toMatchObject({ maximum: ACTIONS, minimum: 1 });
    expect(body('/v1/quotas/{id}', 'put').properties.max_actions).toMatchObject({ maximum: ACTIONS });
    expect(body('/v1/retention', 'post').properties.audit_ttl_seconds).toMatchObject({
      anyOf: expect.arrayContaining([expect.objectContaining({ maximum: RETENTION })]),
    });
    expect(body('/v1/recurring', 'post').properties.max_executions).toMatchObject({
      anyOf: expect.arrayContaining([expect.objectContaining({ maximum: EXECUTIONS })]),
    });
    expect(body('/v1/silences', 'post').properties.duration_seconds).toMatchObject({ maximum: SILENCE });
    expect(body('/v1/silences/{id}/extend', 'post').properties.minutes).toMatchObject({ maximum: SILENCE / 60 });
    expect(body('/v1/chains/definitions', 'post').properties.timeout_seconds).toMatchObject({ maximum: WAIT });
    expect(body('/v1/chains/definitions', 'post').properties.steps).toMatchObject({ maxItems: CHAIN_STEPS });
    // Rule bodies are checked by the rule compiler; the document spells their limits out.
    expect(JSON.stringify(doc.paths['/v1/rules']?.post?.requestBody)).toContain(`group_wait_seconds 0-${WAIT}`);
  });
});

describe('bounded durations and counts in the config file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bounds-'));
  let files = 0;
  const load = (yaml: string) => {
    const file = join(dir, `c${++files}.yaml`);
    writeFileSync(file, yaml);
    return () => loadConfig({ file, env: {} }).config;
  };
  const chain = (extra: string, stepExtra = '') =>
    `providers: [{ name: email, type: noop }]\nchains:\n  definitions:\n    - { name: c, ${extra} steps: [{ name: s, provider: email, action_type: send${stepExtra} }] }\n`;

  it.each([
    ['chains.definitions.0.timeout_seconds', (v: number) => chain(`timeout_seconds: ${v},`), WAIT, '(30 days)'],
    ['chains.definitions.0.steps.0.delay_seconds', (v: number) => chain('', `, delay_seconds: ${v}`), STEP_DELAY, '(7 days)'],
    [
      'quotas.policies.0.max_actions',
      (v: number) => `quotas:\n  policies: [{ id: q, namespace: n, tenant: t, window: daily, max_actions: ${v} }]\n`,
      ACTIONS,
      '',
    ],
    [
      'state_machines.0.timeouts.0.after_seconds',
      (v: number) => `state_machines:\n  - { name: m, initial_state: a, states: [a, b], timeouts: [{ state: a, after_seconds: ${v}, transition_to: b }] }\n`,
      SILENCE,
      '(1 year)',
    ],
    ['audit.ttl_seconds', (v: number) => `audit:\n  ttl_seconds: ${v}\n`, RETENTION, '(10 years)'],
  ] as const)('%s: the maximum loads; one more stops start-up naming the key and the limit', (path, yaml, max, span) => {
    expect(load(yaml(max))).not.toThrow();
    expect(load(yaml(max + 1))).toThrow(`  - ${path}: must be <= ${max}${span ? ` ${span}` : ''}`);
  });
});
