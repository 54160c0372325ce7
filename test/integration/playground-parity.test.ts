import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rulesDir } from '../support/rules-dir.js';
import { BACKENDS, postJson, startGateway, type RunningGateway } from '../support/start-gateway.js';

const RULES = `
rules:
  - { name: vip-allow, priority: 1, condition: { field: action.metadata.labels.tier, eq: vip }, action: { type: allow, metadata: { fast_lane: true } } }
  - { name: no-test-tenants, priority: 2, condition: { field: action.tenant, starts_with: "test-" }, action: { type: suppress, reason: test tenant } }
  - { name: internal-ns, priority: 3, condition: { field: action.namespace, ends_with: "-internal" }, action: { type: suppress } }
  - { name: sms-route, priority: 4, condition: { field: action.payload.channel, in: [sms, text] }, action: { type: reroute, target_provider: sms } }
  - { name: big-amount, priority: 5, condition: { field: action.payload.amount, gt: 1000 }, action: { type: suppress, reason: too big } }
  - { name: small-amount, priority: 6, condition: { field: action.payload.amount, lte: 0 }, action: { type: suppress, reason: non-positive } }
  - { name: scrub, priority: 7, condition: { field: action.payload.email, matches: "[^@]+@example\\\\.com" }, action: { type: modify, changes: { email: "[redacted]" } } }
  - { name: first-item, priority: 8, condition: { field: action.payload.items.0.sku, eq: banned }, action: { type: suppress } }
  - { name: subject-words, priority: 9, condition: { field: action.payload.subject, contains: urgent }, action: { type: throttle, max_count: 100, window_seconds: 60 } }
  - { name: either, priority: 10, condition: { any: [ { field: action.action_type, eq: a1 }, { all: [ { field: action.action_type, eq: a2 }, { field: action.provider, not_eq: sms } ] } ] }, action: { type: deduplicate, ttl_seconds: 60 } }
  - { name: low-score, priority: 11, condition: { field: action.payload.score, lt: 0.5 }, action: { type: suppress } }
  - { name: high-score, priority: 12, condition: { field: action.payload.score, gte: 0.9 }, action: { type: modify, changes: { flagged: true } } }
`;
const CEL = `
rules:
  - name: cel-allowlist
    priority: 13
    expression: 'action.action_type in ["cel-bad", "cel-worse"] ? suppress("not on the list") : allow()'
`;

type Case = { name: string; action: Record<string, unknown> };
const base = { namespace: 'shop', tenant: 'acme', provider: 'email', action_type: 'send', payload: {} };
const CASES: Case[] = [
  { name: 'no earlier match (the CEL rule allows)', action: {} },
  { name: 'vip label', action: { metadata: { labels: { tier: 'vip' } }, tenant: 'test-1' } },
  { name: 'test tenant', action: { tenant: 'test-alpha' } },
  { name: 'tenant prefix near miss', action: { tenant: 'tester' } },
  { name: 'internal namespace', action: { namespace: 'billing-internal' } },
  { name: 'sms channel', action: { payload: { channel: 'sms' } } },
  { name: 'text channel', action: { payload: { channel: 'text' } } },
  { name: 'email channel', action: { payload: { channel: 'email' } } },
  { name: 'big amount', action: { payload: { amount: 5000 } } },
  { name: 'amount as string is no number', action: { payload: { amount: '5000' } } },
  { name: 'zero amount', action: { payload: { amount: 0 } } },
  { name: 'example email', action: { payload: { email: 'ada@example.com' } } },
  { name: 'email near miss (anchored)', action: { payload: { email: 'ada@example.com.evil' } } },
  { name: 'banned first item', action: { payload: { items: [{ sku: 'banned' }, { sku: 'ok' }] } } },
  { name: 'banned second item only', action: { payload: { items: [{ sku: 'ok' }, { sku: 'banned' }] } } },
  { name: 'urgent subject', action: { payload: { subject: 'very urgent!' } } },
  { name: 'any: a1', action: { action_type: 'a1' } },
  { name: 'any: a2 via email', action: { action_type: 'a2' } },
  { name: 'any: a2 via sms provider', action: { action_type: 'a2', provider: 'sms' } },
  { name: 'low score', action: { payload: { score: 0.1 } } },
  { name: 'high score', action: { payload: { score: 0.95 } } },
  { name: 'middle score', action: { payload: { score: 0.7 } } },
  { name: 'cel allow', action: { action_type: 'cel-ok' } },
  { name: 'cel suppress', action: { action_type: 'cel-bad' } },
  { name: 'absent field tests', action: { payload: { nested: { amount: 5000 } } } },
];

const LIVE: Record<string, string> = {
  allow: 'executed',
  suppress: 'suppressed',
  reroute: 'rerouted',
  modify: 'executed',
  deduplicate: 'executed',
  throttle: 'executed',
};

describe.each(BACKENDS)('playground, dry run and dispatch agree (%s backend)', (backend) => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(backend, {
      rules: { directory: rulesDir({ 'rules.yaml': RULES, 'list.cel': CEL }) },
      providers: [
        { name: 'email', type: 'log' },
        { name: 'sms', type: 'log' },
      ],
    });
  });
  afterAll(() => gw.close());

  it.each(CASES)('$name', async ({ action: over }) => {
    const action = { ...base, ...over, dedup_key: `parity-${Math.random()}` };
    const play = (await postJson(`${gw.url}/v1/rules/evaluate`, action)).body as Record<string, unknown>;
    const dry = (await postJson(`${gw.url}/v1/dispatch?dry_run=true`, action)).body as Record<string, unknown>;
    const live = (await postJson(`${gw.url}/v1/dispatch`, action)).body as Record<string, unknown> & {
      response?: { body?: { received?: { payload?: unknown } } };
    };
    expect(dry).toMatchObject({ outcome: 'dry_run', verdict: play.verdict, matched_rule: play.matched_rule });
    expect(live.outcome).toBe(LIVE[play.verdict as string]);
    if (play.verdict === 'suppress') expect(live.rule).toBe(play.matched_rule);
    if (play.verdict === 'reroute') expect(live.new_provider).toBe(dry.would_be_provider);
    if (play.verdict === 'modify') expect(live.response?.body?.received?.payload).toEqual(play.modified_payload);
  });
});
