import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poll } from '../support/poll.js';
import { rulesDir } from '../support/rules-dir.js';
import { BACKENDS, postJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const RULES = `
rules:
  - name: block-spam
    priority: 1
    description: spam never leaves
    condition: { field: action.action_type, eq: spam }
    action: { type: suppress, reason: looks like spam }
  - name: block-spam-later
    priority: 5
    condition: { field: action.action_type, eq: spam }
    action: { type: allow }
  - name: to-sms
    priority: 10
    condition: { field: action.payload.channel, eq: sms }
    action: { type: reroute, target_provider: sms }
  - name: to-nowhere
    priority: 11
    condition: { field: action.payload.channel, eq: pigeon }
    action: { type: reroute, target_provider: pigeon }
  - name: redact
    priority: 20
    condition: { field: action.action_type, eq: signup }
    action: { type: modify, changes: { password: null, source: gateway, profile: { verified: false } } }
  - name: once
    priority: 30
    condition: { field: action.action_type, eq: charge }
    action: { type: deduplicate, ttl_seconds: 1 }
  - name: limited
    priority: 40
    condition: { all: [ { field: action.action_type, eq: ping }, { field: action.metadata.labels.env, in: [prod, staging] } ] }
    action: { type: throttle, max_count: 2, window_seconds: 60, message: slow down }
  - name: guarded
    priority: 50
    condition: { field: action.action_type, eq: alert }
    action: { type: llm_guardrail, evaluator_name: judge }
`;

type Body = Record<string, unknown> & { outcome?: string; response?: { body?: { received?: { payload?: unknown } } } };

describe.each(BACKENDS)('rule outcomes through HTTP (%s backend)', (backend) => {
  let gw: RunningGateway;
  const dispatch = async (over: Record<string, unknown>, query = '') => (await postJson(`${gw.url}/v1/dispatch${query}`, sampleAction(over))).body as Body;

  beforeAll(async () => {
    gw = await startGateway(backend, {
      rules: { directory: rulesDir({ 'main.yaml': RULES }) },
      providers: [
        { name: 'email', type: 'log' },
        { name: 'sms', type: 'log' },
      ],
    });
  });
  afterAll(() => gw.close());

  it('executes when no rule matches', async () => {
    expect(await dispatch({ action_type: 'receipt' })).toMatchObject({ outcome: 'executed' });
  });

  it('takes the first match in priority order, and suppress carries the rule and reason', async () => {
    expect(await dispatch({ action_type: 'spam' })).toMatchObject({ outcome: 'suppressed', rule: 'block-spam', reason: 'looks like spam' });
  });

  it('reroutes to the target provider', async () => {
    const body = await dispatch({ payload: { channel: 'sms' } });
    expect(body).toMatchObject({ outcome: 'rerouted', original_provider: 'email', new_provider: 'sms', response: { body: { provider: 'sms' } } });
  });

  it('fails a reroute to an unknown provider with PROVIDER_NOT_FOUND', async () => {
    expect(await dispatch({ payload: { channel: 'pigeon' } })).toMatchObject({
      outcome: 'failed',
      error: { code: 'PROVIDER_NOT_FOUND', message: 'Provider not found: pigeon' },
    });
  });

  it('hands the provider the merge-patched payload', async () => {
    const body = await dispatch({ action_type: 'signup', payload: { user: 'ada', password: 'x', profile: { name: 'Ada' } } });
    expect(body.outcome).toBe('executed');
    expect(body.response?.body?.received?.payload).toEqual({ user: 'ada', source: 'gateway', profile: { name: 'Ada', verified: false } });
  });

  it('deduplicates within the TTL and re-allows after it', async () => {
    const key = `order-${backend}`;
    expect(await dispatch({ action_type: 'charge', dedup_key: key })).toMatchObject({ outcome: 'executed' });
    // The key was written before this instant, so it lives at least as long as the last duplicate sent after it was refused.
    const written = Date.now();
    expect(await dispatch({ action_type: 'charge', dedup_key: key })).toMatchObject({ outcome: 'deduplicated' });
    expect(await dispatch({ action_type: 'charge', dedup_key: `${key}-other` })).toMatchObject({ outcome: 'executed' });
    // The TTL (1 s) runs on the server's clock: retry until the key is let through, noting when the last refused retry was sent.
    let lastRefusedSent = written;
    const retry = async () => {
      const sent = Date.now();
      const { outcome } = await dispatch({ action_type: 'charge', dedup_key: key });
      if (outcome === 'deduplicated') lastRefusedSent = sent;
      return outcome;
    };
    await poll('the key to be let through again', retry, (outcome) => outcome === 'executed', { timeoutMs: 5000, intervalMs: 50 });
    // Retries are 50 ms apart: the last refused one left about 1 s after the write, less the interval and a few
    // request latencies (slack for a loaded machine); a TTL half as long could not get past 500 ms.
    expect(lastRefusedSent - written).toBeGreaterThanOrEqual(700);
  });

  it('throttles past max_count with the time left in the window', async () => {
    const ping = { action_type: 'ping', tenant: `t-${backend}`, metadata: { labels: { env: 'prod' } } };
    expect(await dispatch(ping)).toMatchObject({ outcome: 'executed' });
    expect(await dispatch(ping)).toMatchObject({ outcome: 'executed' });
    const third = await dispatch(ping);
    expect(third).toMatchObject({ outcome: 'throttled', rule: 'limited', message: 'slow down' });
    expect(third.retry_after_seconds).toBeGreaterThanOrEqual(58);
    expect(third.retry_after_seconds).toBeLessThanOrEqual(60);
    // another tenant has its own window; a label outside the list is not throttled
    expect(await dispatch({ ...ping, tenant: `u-${backend}` })).toMatchObject({ outcome: 'executed' });
    expect(await dispatch({ ...ping, metadata: { labels: { env: 'dev' } } })).toMatchObject({ outcome: 'executed' });
  });

  it('dry runs report the verdict and write nothing', async () => {
    const key = `dry-${backend}`;
    for (let i = 0; i < 3; i += 1) {
      expect(await dispatch({ action_type: 'charge', dedup_key: key }, '?dry_run=true')).toMatchObject({
        outcome: 'dry_run',
        verdict: 'deduplicate',
        matched_rule: 'once',
      });
    }
    expect(await dispatch({ action_type: 'charge', dedup_key: key })).toMatchObject({ outcome: 'executed' });
    expect(await dispatch({ payload: { channel: 'sms' } }, '?dry_run=true')).toMatchObject({ verdict: 'reroute', would_be_provider: 'sms' });
    const tenant = { action_type: 'ping', tenant: `dry-${backend}`, metadata: { labels: { env: 'prod' } } };
    for (let i = 0; i < 5; i += 1) await dispatch(tenant, '?dry_run=true');
    expect(await dispatch(tenant)).toMatchObject({ outcome: 'executed' });
  });

  it('refuses visibly an llm_guardrail rule while the guardrail is off (never a silent allow)', async () => {
    expect(await dispatch({ action_type: 'alert', payload: { host: 'a' } })).toMatchObject({
      outcome: 'failed',
      error: { code: 'GUARDRAIL_EVALUATOR_NOT_FOUND' },
    });
  });
});
