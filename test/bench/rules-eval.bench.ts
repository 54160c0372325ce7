/**
 * Rule-engine throughput: RuleSet.evaluate over 100 mixed rules where 99 do not match and the last
 * one does (the worst case for first-match: every rule runs). Dependency-free; run with
 *   node --conditions=sluice-source --import tsx test/bench/rules-eval.bench.ts
 * BENCH_SECONDS (default 3) sets the measuring time.
 */
import { RuleSet, compileRuleDefinition, type CompiledRule, type EvalInput, type RuleActionView } from '@sluice/rules';
import { nonMatchingCondition } from './rules-fixture.js';

const ENV = { wasmRuntime: false, embeddingProvider: false };
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 3);

function buildRules(): CompiledRule[] {
  const rules: CompiledRule[] = [];
  for (let i = 0; i < 99; i++) {
    const name = `rule-${String(i).padStart(3, '0')}`;
    if (i % 20 === 19) {
      // An expression rule every 20 rules: bool form with a rule action, not matching.
      const expression = `action.payload.amount > ${100_000 + i} && action.tenant in ["acme", "globex"]`;
      rules.push(compileRuleDefinition({ name, priority: i, expression, action: { type: 'suppress', reason: name } }, { kind: 'api' }, ENV));
    } else {
      rules.push(
        compileRuleDefinition({ name, priority: i, condition: nonMatchingCondition(i), action: { type: 'suppress', reason: name } }, { kind: 'api' }, ENV),
      );
    }
  }
  rules.push(
    compileRuleDefinition(
      {
        name: 'rule-match',
        priority: 1000,
        condition: {
          all: [
            { field: 'action.tenant', eq: 'acme' },
            { field: 'action.payload.amount', gt: 10 },
          ],
        },
        action: { type: 'throttle', max_count: 5, window_seconds: 60 },
      },
      { kind: 'api' },
      ENV,
    ),
  );
  return rules;
}

const action: RuleActionView = {
  namespace: 'billing',
  tenant: 'acme',
  provider: 'email',
  action_type: 'send_invoice',
  id: 'act-1',
  payload: {
    subject: 'Your invoice for March',
    amount: 1250.5,
    tags: ['invoice', 'monthly'],
    customer: { email: 'ap@customer.example', tier: 'gold' },
    items: [
      { sku: 'A-1', quantity: 3 },
      { sku: 'B-2', quantity: 1 },
    ],
    region: 'eu',
  },
  metadata: { env: 'prod', team: 'finance' },
};

function main(): void {
  const rules = buildRules();
  const set = new RuleSet(rules);
  const always = () => true;
  let errors = 0;
  const onError = () => void errors++;
  // A fresh input per evaluation, as dispatch builds one (expression rules convert it once per input).
  const evaluateOnce = () => set.evaluate({ action, state: {}, now: Date.now() } satisfies EvalInput, always, onError);

  const check = evaluateOnce();
  if (check?.rule.name !== 'rule-match') throw new Error(`benchmark setup: expected rule-match to decide, got ${check?.rule.name ?? 'no match'}`);

  const run = (seconds: number) => {
    const deadline = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
    const started = process.hrtime.bigint();
    let evaluations = 0;
    for (;;) {
      for (let i = 0; i < 1000; i++) evaluateOnce();
      evaluations += 1000;
      if (process.hrtime.bigint() >= deadline) break;
    }
    return { evaluations, elapsedNs: Number(process.hrtime.bigint() - started) };
  };

  run(Math.min(1, SECONDS / 3)); // warm-up (JIT)
  const { evaluations, elapsedNs } = run(SECONDS);
  const perSecond = Math.round(evaluations / (elapsedNs / 1e9));
  const result = {
    benchmark: 'rules-eval',
    rules: rules.length,
    expression_rules: rules.filter((r) => r.source.kind === 'api' && 'expression' in r.definition).length,
    seconds: Number((elapsedNs / 1e9).toFixed(3)),
    evaluations,
    evaluations_per_second: perSecond,
    ns_per_evaluation: Math.round(elapsedNs / evaluations),
    ns_per_rule: Math.round(elapsedNs / evaluations / rules.length),
    errors,
    node: process.version,
  };
  console.log(
    `rules-eval: ${perSecond.toLocaleString('en-US')} evaluations/s over ${result.rules} rules (${result.expression_rules} CEL; 99 miss, last matches), ${result.ns_per_evaluation} ns/evaluation`,
  );
  console.log(JSON.stringify(result));
}

main();
