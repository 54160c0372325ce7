import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

/** Reproducible in CI; FUZZ_SEED=<n> explores elsewhere (a failure prints its seed and path). */
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_126);
const RUNS = Number(process.env.FUZZ_RUNS ?? 120);

type Body = Record<string, unknown>;

const name = fc.oneof(fc.constantFrom('payments', 'acme', 'email', 'charge'), fc.stringMatching(/^[a-z][a-z0-9._-]{0,40}$/));

/** A valid dispatch body, then up to two of its fields replaced by anything, or an unknown field added. */
const FIELDS = ['namespace', 'tenant', 'provider', 'action_type', 'payload', 'metadata', 'id', 'dedup_key', 'created_at', 'unknown_field'] as const;
const dispatchBody = fc
  .record(
    {
      namespace: name,
      tenant: name,
      provider: fc.constantFrom('email', 'email', 'nope'),
      action_type: name,
      payload: fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 6 }),
      metadata: fc.record({ labels: fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 20 }), { maxKeys: 4 }) }),
      id: fc.string({ minLength: 1, maxLength: 300 }),
      dedup_key: fc.string({ maxLength: 60 }),
      created_at: fc.date({ noInvalidDate: true, min: new Date('2000-01-01'), max: new Date('2100-01-01') }).map((d) => d.toISOString()),
    },
    { requiredKeys: ['namespace', 'tenant', 'provider', 'action_type', 'payload'] },
  )
  .chain((body) =>
    fc.array(fc.tuple(fc.constantFrom(...FIELDS), fc.anything({ maxDepth: 3 })), { maxLength: 2 }).map((mutations) => {
      const mutated: Record<string, unknown> = { ...body };
      for (const [field, value] of mutations) mutated[field] = value;
      return mutated;
    }),
  );

const FIELD_PATHS = ['action.tenant', 'action.payload.amount', 'action.payload.text', 'action.payload.l', 'action.metadata.labels.env', 'action.nonsense'];
const fieldTest = fc.oneof(
  fc.record({ field: fc.constantFrom(...FIELD_PATHS), eq: fc.jsonValue({ maxDepth: 2 }) }),
  fc.record({ field: fc.constantFrom(...FIELD_PATHS), in: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 4 }) }),
  fc.record({ field: fc.constantFrom(...FIELD_PATHS), contains: fc.oneof(fc.string({ maxLength: 5 }), fc.integer()) }),
  fc.record({ field: fc.constantFrom(...FIELD_PATHS), matches: fc.constantFrom('a.*', '(a|b)+c', '[0-9]{1,50}', '(?s).*x', 'a{1000}', '(') }),
  fc.record({ field: fc.constantFrom(...FIELD_PATHS), gt: fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 3 })) }),
  fc.record({ field: fc.constantFrom(...FIELD_PATHS), starts_with: fc.string({ maxLength: 5 }) }),
);
const condition = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    fieldTest,
    fc.record({ all: fc.array(tie('node'), { maxLength: 3 }) }),
    fc.record({ any: fc.array(tie('node'), { maxLength: 3 }) }),
    fc.record({ not: tie('node') }),
  ),
})).node;

const ruleAction = fc.oneof(
  fc.constantFrom({ type: 'suppress' }, { type: 'allow' }, { type: 'reroute', target_provider: 'email' }),
  fc.record({ type: fc.constant('deduplicate'), ttl_seconds: fc.integer({ min: -5, max: 3_000_000 }) }),
  fc.record({ type: fc.constant('throttle'), max_count: fc.integer({ min: -1, max: 100 }), window_seconds: fc.integer({ min: -1, max: 3_000_000 }) }),
  fc.record({ type: fc.constant('modify'), changes: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 }) }),
  fc.record({
    type: fc.constant('group'),
    group_by: fc.array(fc.constantFrom(...FIELD_PATHS), { maxLength: 3 }),
    group_wait_seconds: fc.integer({ min: -1, max: 3_000_000 }),
  }),
);

const EXPRESSIONS = [
  'action.payload.amount > 10',
  'has(action.payload.l) && action.payload.l.all(x, x > 0)',
  'action.payload.l.map(x, action.payload.l.map(y, x + y)).size() > 0',
  'action.tenant == "acme" ? suppress("no") : allow()',
  'action.payload.text.re2Matches("a+b")',
  ')',
  'allow() || true',
];
const ruleName = fc.stringMatching(/^[a-z][a-z0-9-]{0,30}$/);
const RULE_FIELDS = ['name', 'priority', 'condition', 'expression', 'action', 'enabled', 'description', 'unknown_field'] as const;
const ruleBody = fc
  .oneof(
    fc.record({ name: ruleName, priority: fc.integer({ min: -100, max: 100 }), condition, action: ruleAction }),
    fc.record({
      name: ruleName,
      priority: fc.integer({ min: -100, max: 100 }),
      expression: fc.constantFrom(...EXPRESSIONS),
      action: fc.constant({ type: 'suppress' }),
    }),
  )
  .chain((rule) =>
    fc.array(fc.tuple(fc.constantFrom(...RULE_FIELDS), fc.anything({ maxDepth: 3 })), { maxLength: 2 }).map((mutations) => {
      const mutated: Record<string, unknown> = { ...rule };
      for (const [field, value] of mutations) mutated[field] = value;
      return mutated;
    }),
  );

describe.each(BACKENDS)('faults: fuzzed request bodies (%s)', (backend) => {
  let gw: RunningGateway;
  const url = (path: string) => `${gw.url}${path}`;
  const auditTotal = async () => ((await requestJson('GET', url('/v1/audit?limit=1'))).body as { total: number }).total;
  const ruleNames = async () => ((await requestJson('GET', url('/v1/rules'))).body as { rules: { name: string }[] }).rules.map((r) => r.name).sort();

  beforeAll(async () => {
    gw = await startGateway(backend);
  });
  afterAll(() => gw.close());

  /** A 4xx carries our error body; a 5xx is a defect. */
  function expectNoServerError(res: { status: number; body: unknown }, sent: unknown): void {
    expect(res.status, `5xx for ${JSON.stringify(sent).slice(0, 500)}`).toBeLessThan(500);
    if (res.status >= 400) expect(res.body).toMatchObject({ error: expect.any(String), code: expect.stringMatching(/^[A-Z][A-Z_]*$/) });
  }

  it('dispatch: no body gets a 5xx, and a refused one records nothing', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(dispatchBody, async (body) => {
        const before = await auditTotal();
        const res = await postJson(url('/v1/dispatch'), body);
        expectNoServerError(res, body);
        if (res.status >= 400) expect(await auditTotal()).toBe(before);
        else accepted++;
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // Not vacuous: a good share of the bodies got through validation to the pipeline.
    expect(accepted).toBeGreaterThan(RUNS / 20);
    expect((await requestJson('GET', url('/health'))).status).toBe(200);
  });

  it('rules: no body gets a 5xx, a refused one creates nothing, and no accepted rule makes a dispatch fail with a 5xx', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(ruleBody, dispatchBody, async (rule, body) => {
        const before = await ruleNames();
        const res = await postJson(url('/v1/rules'), rule);
        expectNoServerError(res, rule);
        if (res.status >= 400) {
          expect(await ruleNames()).toEqual(before);
          return;
        }
        accepted++;
        const created = (res.body as Body).name as string;
        try {
          expectNoServerError(await postJson(url('/v1/dispatch'), sampleAction({ payload: { amount: 50, text: 'x', l: [1, 2] } })), rule);
          expectNoServerError(await postJson(url('/v1/dispatch'), body), { rule, body });
        } finally {
          await requestJson('DELETE', url(`/v1/rules/${encodeURIComponent(created)}`));
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(accepted).toBeGreaterThan(RUNS / 20);
    expect((await requestJson('GET', url('/health'))).status).toBe(200);
  });
});
