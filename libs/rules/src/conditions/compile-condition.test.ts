import { describe, expect, it } from 'vitest';
import { compileRuleDefinition } from '../definition/compile-rule.js';
import { PluginCallNeeded, SimilarityNeeded } from '../errors.js';
import { conditionIssues, conditionMatches, issuesOf, makeInput, ruleWithCondition } from '../../test/rule-fixtures.js';

const tenantIs = (t: string) => ({ field: 'action.tenant', eq: t });
const amountOver = (n: number) => ({ field: 'action.payload.amount', gt: n });

describe('all / any', () => {
  const payload = { amount: 150 };

  it('all matches only when every condition matches', () => {
    expect(conditionMatches({ all: [tenantIs('acme'), amountOver(100)] }, { payload })).toBe(true);
    expect(conditionMatches({ all: [tenantIs('acme'), amountOver(200)] }, { payload })).toBe(false);
    expect(conditionMatches({ all: [tenantIs('other'), amountOver(100)] }, { payload })).toBe(false);
  });

  it('any matches when at least one condition matches', () => {
    expect(conditionMatches({ any: [tenantIs('other'), amountOver(100)] }, { payload })).toBe(true);
    expect(conditionMatches({ any: [tenantIs('other'), amountOver(200)] }, { payload })).toBe(false);
  });

  it('nests', () => {
    const condition = { any: [{ all: [tenantIs('acme'), amountOver(1000)] }, { all: [tenantIs('acme'), { field: 'action.payload.vip', eq: true }] }] };
    expect(conditionMatches(condition, { payload: { amount: 5, vip: true } })).toBe(true);
    expect(conditionMatches(condition, { payload: { amount: 5 } })).toBe(false);
  });

  it('treat absent fields inside as non-matching tests (not errors)', () => {
    expect(conditionMatches({ all: [tenantIs('acme'), { field: 'action.payload.missing', not_eq: 1 }] }, {})).toBe(true);
    expect(
      conditionMatches(
        {
          any: [
            { field: 'action.payload.missing', eq: 1 },
            { field: 'state.current', eq: 'open' },
          ],
        },
        {},
      ),
    ).toBe(false);
  });

  it('need a non-empty list', () => {
    expect(conditionIssues({ all: [] })).toEqual([{ path: 'condition.all', message: expect.stringMatching(/non-empty list/) }]);
    expect(conditionIssues({ any: tenantIs('x') })[0]?.message).toMatch(/any needs a non-empty list of conditions, got a mapping/);
  });

  it('report every bad child with its path', () => {
    const issues = conditionIssues({ all: [tenantIs('acme'), { field: 'nope.x', eq: 1 }, { any: [{ field: 'action.tenant' }] }] });
    expect(issues.map((i) => i.path)).toEqual(['condition.all.1.field', 'condition.all.2.any.0']);
  });

  it('refuse keys beside all/any', () => {
    expect(conditionIssues({ all: [tenantIs('a')], note: 'x' })).toEqual([{ path: 'condition.note', message: 'unknown key "note" beside all' }]);
  });
});

describe('nesting depth', () => {
  const nest = (levels: number): unknown => {
    let condition: unknown = tenantIs('acme');
    for (let i = 0; i < levels; i++) condition = i % 2 === 0 ? { all: [condition] } : { any: [condition] };
    return condition;
  };

  it('allows 16 levels of all/any', () => {
    expect(conditionMatches(nest(16), {})).toBe(true);
  });

  it('refuses a 17th level, naming the rule', () => {
    const issues = issuesOf({ name: 'too-deep', condition: nest(17), action: { type: 'allow' } });
    expect(issues).toHaveLength(1);
    expect(issues[0]?.message).toMatch(/deeper than 16/);
    expect(() => ruleWithCondition(nest(17), 'too-deep')).toThrow(/invalid rule "too-deep".*deeper than 16/);
  });

  it('stops at the limit on absurdly deep input (no stack overflow)', () => {
    expect(conditionIssues(nest(50_000))[0]?.message).toMatch(/deeper than 16/);
  });

  it('refuses operands nested deeper than 64 levels', () => {
    let operand: unknown = 1;
    for (let i = 0; i < 50_000; i++) operand = [operand];
    expect(conditionIssues({ field: 'action.payload.x', eq: operand })[0]?.message).toMatch(/deeper than 64/);
  });
});

describe('field test shape', () => {
  it('needs exactly one operator: zero is an error naming the rule', () => {
    expect(() => ruleWithCondition({ field: 'action.tenant' }, 'no-op')).toThrow(
      /invalid rule "no-op": condition: a field test needs exactly one operator .*found none/,
    );
  });

  it('needs exactly one operator: two is an error, aliases included', () => {
    expect(conditionIssues({ field: 'action.payload.amount', gt: 1, lt: 5 })[0]?.message).toMatch(/found gt, lt/);
    expect(conditionIssues({ field: 'action.tenant', ne: 'a', not_eq: 'b' })[0]?.message).toMatch(/found ne, not_eq/);
  });

  it('refuses unknown operators by name', () => {
    expect(conditionIssues({ field: 'action.tenant', regex: 'a.*' })).toEqual([
      { path: 'condition.regex', message: expect.stringMatching(/^unknown operator "regex"/) },
      { path: 'condition', message: expect.stringMatching(/found none/) },
    ]);
  });

  it('needs a string field', () => {
    expect(conditionIssues({ field: 5, eq: 1 })[0]).toEqual({ path: 'condition.field', message: expect.stringMatching(/path string/) });
  });

  it('refuses unknown path roots at load time', () => {
    expect(conditionIssues({ field: 'request.body', eq: 1 })[0]).toEqual({
      path: 'condition.field',
      message: expect.stringMatching(/unknown field path root "request"/),
    });
  });

  it('refuses conditions that are not mappings or have no recognised form', () => {
    expect(conditionIssues('action.tenant == "a"')[0]?.message).toMatch(/must be a mapping/);
    expect(conditionIssues({ not: tenantIs('a') })[0]?.message).toMatch(/needs exactly one of field, all, any, wasm_plugin, semantic_match; found keys not/);
    expect(conditionIssues({ all: [tenantIs('a')], field: 'action.tenant' })[0]?.message).toMatch(/found field and all/);
  });
});

describe('plugin and semantic conditions', () => {
  it('wasm_plugin validates its shape, then is refused: runtime not configured', () => {
    expect(() => ruleWithCondition({ wasm_plugin: 'pii-check' }, 'wasm-rule')).toThrow(
      /invalid rule "wasm-rule": condition: wasm_plugin "pii-check" cannot be used: the WASM plugin runtime is not configured/,
    );
    expect(conditionIssues({ wasm_plugin: 'p', wasm_function: 'check' })[0]?.message).toMatch(/not configured/);
    expect(conditionIssues({ wasm_plugin: '' })[0]?.path).toBe('condition.wasm_plugin');
    expect(conditionIssues({ wasm_plugin: 'p', memory: 5 })).toEqual([{ path: 'condition.memory', message: 'unknown key "memory"' }]);
  });

  it('semantic_match validates threshold 0..1 and text_field, then is refused: embedding provider not configured', () => {
    expect(() => ruleWithCondition({ semantic_match: 'billing complaints', threshold: 0.9, text_field: 'action.payload.body' }, 'sem')).toThrow(
      /invalid rule "sem": condition: semantic_match cannot be used: the embedding provider is not configured/,
    );
    expect(conditionIssues({ semantic_match: 'x', threshold: 1.5 })[0]?.path).toBe('condition.threshold');
    expect(conditionIssues({ semantic_match: 'x', threshold: -0.1 })[0]?.path).toBe('condition.threshold');
    expect(conditionIssues({ semantic_match: 'x', text_field: 3 })[0]?.path).toBe('condition.text_field');
  });

  it('are refused inside all/any too', () => {
    expect(conditionIssues({ any: [tenantIs('a'), { wasm_plugin: 'p' }] })[0]).toEqual({
      path: 'condition.any.1',
      message: expect.stringMatching(/not configured/),
    });
  });

  it('load when the runtime is configured, and ask for what they need: a plugin verdict, a similarity', () => {
    const env = { wasmRuntime: true, embeddingProvider: true };
    const wasm = compileRuleDefinition({ name: 'w', condition: { wasm_plugin: 'p' }, action: { type: 'allow' } }, { kind: 'api' }, env);
    expect(wasm.definition['condition']).toEqual({ wasm_plugin: 'p', wasm_function: 'evaluate' });
    expect(() => wasm.evaluate(makeInput())).toThrow(PluginCallNeeded);
    expect(wasm.evaluate({ ...makeInput(), plugin: (p, fn) => p === 'p' && fn === 'evaluate' })).toEqual({ type: 'allow' });
    expect(wasm.evaluate({ ...makeInput(), plugin: () => false })).toBeNull();
    const semantic = compileRuleDefinition({ name: 's', condition: { semantic_match: 'refunds' }, action: { type: 'allow' } }, { kind: 'api' }, env);
    expect(semantic.definition['condition']).toEqual({ semantic_match: 'refunds', threshold: 0.8 });
    expect(semantic.conditionDisplay).toBe('semantic_match("refunds", threshold=0.8)');
    expect(() => semantic.evaluate(makeInput())).toThrow(SimilarityNeeded);
    expect(semantic.evaluate({ ...makeInput(), similarity: () => 0.8 })).toEqual({ type: 'allow' });
    expect(semantic.evaluate({ ...makeInput(), similarity: () => 0.79 })).toBeNull();
  });
});

describe('display and canonical definition', () => {
  it('renders field tests and combinators readably', () => {
    const rule = ruleWithCondition({ all: [tenantIs('acme'), { any: [amountOver(100), { field: 'action.metadata.env', in_list: ['prod'] }] }] });
    expect(rule.conditionDisplay).toBe('(action.tenant eq "acme" AND (action.payload.amount gt 100 OR action.metadata.env in ["prod"]))');
  });

  it('normalizes operator aliases in the definition', () => {
    const rule = ruleWithCondition({
      any: [
        { field: 'action.tenant', ne: 'a' },
        { field: 'action.tenant', in_list: ['b'] },
      ],
    });
    expect(rule.definition['condition']).toEqual({
      any: [
        { field: 'action.tenant', not_eq: 'a' },
        { field: 'action.tenant', in: ['b'] },
      ],
    });
  });
});
