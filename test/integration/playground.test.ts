import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rulesDir } from '../support/rules-dir.js';
import { BACKENDS, postJson, startGateway, type RunningGateway } from '../support/start-gateway.js';

const RULES = `
rules:
  - name: quiet
    priority: 1
    enabled: false
    condition: { field: action.action_type, eq: noisy }
    action: { type: suppress }
  - name: patch
    priority: 3
    condition: { field: action.action_type, eq: signup }
    action: { type: modify, changes: { password: null } }
  - name: open-only
    priority: 4
    condition: { field: state.current, eq: open }
    action: { type: suppress, reason: already open }
  - name: catch-all-spam
    priority: 9
    condition: { field: action.payload.kind, eq: spam }
    action: { type: suppress }
`;
const CEL = `
rules:
  - name: cel-boom
    priority: 2
    expression: 'action.action_type == "boom" && action.payload.missing.deeper == "x"'
    action: { type: suppress }
`;

const base = { namespace: 'n', tenant: 't', provider: 'email', payload: {} };

describe.each(BACKENDS)('rule playground (%s backend)', (backend) => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(backend, { rules: { directory: rulesDir({ 'a.yaml': RULES, 'b.cel': CEL }) } });
  });
  afterAll(() => gw.close());
  const evaluate = async (body: Record<string, unknown>) => {
    const res = await postJson(`${gw.url}/v1/rules/evaluate`, { ...base, ...body });
    expect(res.status).toBe(200);
    return res.body as Record<string, unknown> & { trace: Record<string, unknown>[] };
  };

  it('falls through to allow with a synthetic trace entry', async () => {
    const r = await evaluate({ action_type: 'other' });
    expect(r).toMatchObject({ verdict: 'allow', matched_rule: null, has_errors: false, modified_payload: null });
    expect(r.trace.at(-1)).toMatchObject({ rule_name: '(default fallthrough)', result: 'matched', action: 'allow' });
    expect(typeof r.evaluation_duration_us).toBe('number');
    expect(r.context).toMatchObject({ timezone: 'UTC', time: expect.objectContaining({ year: expect.any(Number) }) });
  });

  it('shows disabled rules only on request, as skipped', async () => {
    const hidden = await evaluate({ action_type: 'noisy' });
    expect(hidden.trace.some((e) => e.rule_name === 'quiet')).toBe(false);
    const shown = await evaluate({ action_type: 'noisy', include_disabled: true });
    expect(shown.trace.find((e) => e.rule_name === 'quiet')).toMatchObject({ result: 'skipped', skip_reason: 'disabled', enabled: false });
    expect(shown.verdict).toBe('allow');
  });

  it('returns the modified payload for a modify match, and skips later rules unless evaluate_all', async () => {
    const r = await evaluate({ action_type: 'signup', payload: { user: 'a', password: 'p', kind: 'spam' } });
    expect(r).toMatchObject({ verdict: 'modify', matched_rule: 'patch', modified_payload: { user: 'a', kind: 'spam' } });
    expect(r.trace.find((e) => e.rule_name === 'catch-all-spam')).toMatchObject({ result: 'skipped', skip_reason: 'earlier_rule_matched' });
    const all = await evaluate({ action_type: 'signup', payload: { password: 'p', kind: 'spam' }, evaluate_all: true });
    expect(all.matched_rule).toBe('patch');
    expect(all.trace.find((e) => e.rule_name === 'catch-all-spam')).toMatchObject({ result: 'matched' });
  });

  it('gives verdict error when a rule errors before any match', async () => {
    const r = await evaluate({ action_type: 'boom' });
    expect(r).toMatchObject({ verdict: 'error', has_errors: true, matched_rule: null });
    const entry = r.trace.find((e) => e.rule_name === 'cel-boom');
    expect(entry).toMatchObject({ result: 'error' });
    expect(typeof entry?.error).toBe('string');
  });

  it('reads mock_state and evaluate_at', async () => {
    const r = await evaluate({ action_type: 'x', mock_state: { current: 'open' }, evaluate_at: '2030-05-06T07:08:09Z' });
    expect(r).toMatchObject({ verdict: 'suppress', matched_rule: 'open-only' });
    expect(r.context).toMatchObject({ time: expect.objectContaining({ year: 2030, month: 5, day: 6, hour: 7 }) });
  });

  it('lists environment keys without secrets', async () => {
    process.env.SLUICE_PLAYGROUND_API_TOKEN = 'x';
    process.env.SLUICE_PLAYGROUND_VISIBLE = 'y';
    const r = await evaluate({ action_type: 'x' });
    const keys = (r.context as { environment_keys: string[] }).environment_keys;
    expect(keys).toContain('SLUICE_PLAYGROUND_VISIBLE');
    expect(keys).not.toContain('SLUICE_PLAYGROUND_API_TOKEN');
    expect(keys.some((k) => /SECRET|PASSWORD|TOKEN|CREDENTIAL|PRIVATE_KEY|_KEY$/i.test(k))).toBe(false);
  });

  it('is read-only: no dispatch counted, no provider call', async () => {
    const before = gw.runtime.metrics.snapshot();
    for (let i = 0; i < 5; i += 1) await evaluate({ action_type: 'signup', payload: { password: 'p' } });
    expect(gw.runtime.metrics.snapshot()).toEqual(before);
    const scrape = await (await fetch(`${gw.url}/metrics`)).text();
    expect(scrape).not.toMatch(/sluice_provider_requests_total\{/);
  });

  it('rejects a bad playground body', async () => {
    const res = await postJson(`${gw.url}/v1/rules/evaluate`, { namespace: 'n' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED' });
  });
});
