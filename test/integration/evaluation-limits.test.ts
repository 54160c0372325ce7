import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

/** The reported freezers: 9.5 s for the regex on a 30 KB field, 13 s for the expression. */
const COUNTED_REPEATS = `(?s).*${'a{1000}'.repeat(145)}b`;
const NESTED_COMPREHENSIONS = 'action.payload.l.all(x, action.payload.l.all(y, action.payload.l.all(z, x + y + z >= 0)))';
/** The costliest kind of pattern the limits let through: near 1000 instructions, overflowing RE2's DFA cache. */
const WORST_ALLOWED = '(?s)(.{1,100}a){1,4}b';

function hostileText(length: number): string {
  return Array.from({ length }, (_, i) => (i % 7 ? 'a' : 'b')).join('');
}

describe.each(BACKENDS)('evaluation limits over HTTP (%s)', (backend) => {
  let gw: RunningGateway;
  const url = (path: string) => `${gw.url}${path}`;

  beforeAll(async () => {
    // The wall-time limit at its maximum: these tests exercise the cost budgets, which a loaded
    // machine must not pre-empt with the 50 ms default (libs/rules tests that limit on its own).
    gw = await startGateway(backend, { rules: { regex_max_input_length: 32_768, cel_max_duration_ms: 10_000 } });
  });
  afterAll(() => gw.close());

  /** Runs `work` while probing /health: the longest a probe waited says how long the loop was held. */
  async function longestHealthWait(work: () => Promise<unknown>): Promise<number> {
    let done = false;
    let longest = 0;
    const probing = (async () => {
      while (!done) {
        const started = performance.now();
        expect((await requestJson('GET', url('/health'))).status).toBe(200);
        longest = Math.max(longest, performance.now() - started);
      }
    })();
    await work();
    done = true;
    await probing;
    return longest;
  }

  it('refuses a rule whose regex compiles past the limit, with 400 naming it, and creates nothing', async () => {
    const name = `freezer-${backend}`;
    const refused = await postJson(url('/v1/rules'), {
      name,
      condition: { field: 'action.payload.text', matches: COUNTED_REPEATS },
      action: { type: 'suppress' },
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toMatch(/would compile to about 14500\d instructions, over the limit of 1000/);
    expect((await requestJson('GET', url(`/v1/rules/${name}`))).status).toBe(404);
  });

  it('refuses the same regex as a silence matcher value', async () => {
    const refused = await postJson(url('/v1/silences'), {
      namespace: 'n',
      tenant: 't',
      matchers: [{ name: 'text', op: 'regex', value: `(?s).*${'a{300}'.repeat(14)}b` }],
      comment: 'too big',
      duration_seconds: 60,
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toMatch(/more than 64 KB/);
  });

  it('keeps the loop responsive while the worst allowed regex scans the longest allowed field, and refuses longer fields as a rule error', async () => {
    const tenant = `worst-${backend}`;
    const rule = {
      name: `worst-${backend}`,
      condition: {
        all: [
          { field: 'action.tenant', eq: tenant },
          { field: 'action.payload.text', matches: WORST_ALLOWED },
        ],
      },
      action: { type: 'suppress' },
    };
    expect((await postJson(url('/v1/rules'), rule)).status).toBe(201);
    const longest = await longestHealthWait(async () => {
      for (let i = 0; i < 5; i++) {
        const sent = await postJson(url('/v1/dispatch'), sampleAction({ tenant, payload: { text: hostileText(32_768) } }));
        expect(sent.body).toMatchObject({ outcome: 'executed' });
      }
    });
    // Generous for a loaded CI machine: the unbounded pattern held it for seconds.
    expect(longest).toBeLessThan(1000);
    // One character more than rules.regex_max_input_length: an evaluation error, so the rule does not match.
    const over = await postJson(url('/v1/rules/evaluate'), { ...sampleAction({ tenant, payload: { text: hostileText(32_769) } }), metadata: {} });
    expect(over.body).toMatchObject({ verdict: 'error', has_errors: true });
    expect(JSON.stringify(over.body)).toMatch(/at most 32768 characters/);
  });

  it('stops an expression past its budget: the dispatch fails, the playground reports the error', async () => {
    const tenant = `cel-${backend}`;
    const rule = { name: `cel-${backend}`, expression: `action.tenant == "${tenant}" && ${NESTED_COMPREHENSIONS}`, action: { type: 'suppress' } };
    expect((await postJson(url('/v1/rules'), rule)).status).toBe(201);
    const l = Array.from({ length: 400 }, (_, i) => i);
    const longest = await longestHealthWait(async () => {
      // Stopped at a limit the payload chose: the dispatch fails rather than skip the rule.
      const sent = await postJson(url('/v1/dispatch'), sampleAction({ tenant, payload: { l } }));
      expect(sent.body).toMatchObject({ outcome: 'failed', error: { code: 'RULE_LIMIT_EXCEEDED', retryable: false, attempts: 0 } });
      expect(JSON.stringify(sent.body)).toMatch(new RegExp(`rule cel-${backend}: the expression exceeded its evaluation budget`));
    });
    expect(longest).toBeLessThan(1000);
    const trace = await postJson(url('/v1/rules/evaluate'), { ...sampleAction({ tenant, payload: { l } }), metadata: {} });
    expect(trace.body).toMatchObject({ verdict: 'error' });
    expect(JSON.stringify(trace.body)).toMatch(/exceeded its evaluation budget of 100000 units/);
    // Within budget, the same rule decides as written.
    expect((await postJson(url('/v1/dispatch'), sampleAction({ tenant, payload: { l: l.slice(0, 20) } }))).body).toMatchObject({ outcome: 'suppressed' });
  });

  it('a tenant cannot pad its payload past a rule: a regex input over the limit fails the dispatch instead of skipping the rule', async () => {
    const tenant = `padded-${backend}`;
    const rule = {
      name: `no-secrets-${backend}`,
      condition: {
        all: [
          { field: 'action.tenant', eq: tenant },
          { field: 'action.payload.body', matches: '(?is).*password\\s*[:=].*' },
        ],
      },
      action: { type: 'suppress' },
    };
    expect((await postJson(url('/v1/rules'), rule)).status).toBe(201);
    const secret = 'hello password: hunter2';
    expect((await postJson(url('/v1/dispatch'), sampleAction({ tenant, payload: { body: secret } }))).body).toMatchObject({ outcome: 'suppressed' });
    const padded = await postJson(url('/v1/dispatch'), sampleAction({ tenant, id: `padded-${backend}`, payload: { body: `${secret}${' '.repeat(32_768)}` } }));
    expect(padded.body).toMatchObject({ outcome: 'failed', error: { code: 'RULE_LIMIT_EXCEEDED', retryable: false, attempts: 0 } });
    expect(JSON.stringify(padded.body)).toMatch(/at most 32768 characters \(rules.regex_max_input_length\)/);
    // Recorded as failed, never executed.
    const record = await requestJson('GET', url(`/v1/audit/padded-${backend}`));
    expect(record.body).toMatchObject({ outcome: 'failed' });
  });

  it('does not apply a silence whose regex would scan a label value too long for its program', async () => {
    const tenant = `silence-${backend}`;
    // 3005 instructions: scans at most 4,000,000 / 3005 = 1331 characters.
    const big = `(?s).*${'a{200}'.repeat(15)}b`;
    const created = await postJson(url('/v1/silences'), {
      namespace: 'n',
      tenant,
      matchers: [{ name: 'text', op: 'regex', value: big }],
      comment: 'c',
      duration_seconds: 600,
    });
    expect(created.status).toBe(201);
    const longest = await longestHealthWait(async () => {
      const sent = await postJson(url('/v1/dispatch'), sampleAction({ namespace: 'n', tenant, metadata: { labels: { text: `${'a'.repeat(30_000)}b` } } }));
      // The pattern matches this value, but scanning it would hold the loop for seconds: the silence does not apply.
      expect(sent.body).toMatchObject({ outcome: 'executed' });
    });
    expect(longest).toBeLessThan(1000);
  });
});

describe.each(BACKENDS)('the rules of one request share a time budget (%s)', (backend) => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(backend, { rules: { request_max_evaluation_ms: 20 }, server: { max_body_bytes: 8 * 1024 * 1024 } });
  });
  afterAll(() => gw.close());

  it('a batch whose items spend it fails the items left, and says which limit', async () => {
    const tenant = `budget-${backend}`;
    // Each item's rule walks 20,000 elements: well within one expression's limits, a few ms each.
    const rule = { name: `walker-${backend}`, expression: `action.tenant == "${tenant}" && action.payload.l.exists(i, i < 0)`, action: { type: 'suppress' } };
    expect((await postJson(`${gw.url}/v1/rules`, rule)).status).toBe(201);
    const l = Array.from({ length: 20_000 }, (_, i) => i);
    const sent = await postJson(`${gw.url}/v1/dispatch/batch`, { actions: Array.from({ length: 40 }, () => sampleAction({ tenant, payload: { l } })) });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const results = (sent.body as { results: { status: string; outcome?: { outcome: string; error?: { code: string; message: string } } }[] }).results;
    expect(results[0]).toMatchObject({ status: 'success', outcome: { outcome: 'executed' } });
    const spent = results.filter((r) => r.outcome?.error?.code === 'RULE_LIMIT_EXCEEDED');
    expect(spent.length).toBeGreaterThan(0);
    expect(spent[0]?.outcome?.error?.message).toMatch(/the request's rules took more than 20 ms \(rules.request_max_evaluation_ms\)/);
    expect(results.every((r) => r.outcome?.outcome === 'executed' || r.outcome?.error?.code === 'RULE_LIMIT_EXCEEDED')).toBe(true);
    // A request of its own starts with the whole budget.
    expect((await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant, payload: { l } }))).body).toMatchObject({ outcome: 'executed' });
  });
});
