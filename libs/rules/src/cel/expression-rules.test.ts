import { describe, expect, it } from 'vitest';
import { compileRuleDefinition } from '../definition/compile-rule.js';
import { RuleEvaluationError } from '../errors.js';
import type { CompiledRule } from '../types.js';
import { NO_RUNTIMES, issuesOf, makeInput, type InputParts } from '../../test/rule-fixtures.js';

const cel = { kind: 'cel', file: 'rules.cel' } as const;
const expressionRule = (expression: string, action?: unknown): CompiledRule =>
  compileRuleDefinition({ name: 'x', expression, ...(action ? { action } : {}) }, cel, NO_RUNTIMES);
const run = (expression: string, parts: InputParts = {}, action?: unknown) => expressionRule(expression, action).evaluate(makeInput(parts));
const suppressAll = { type: 'suppress', reason: 'cel' };

describe('expression rules: ternary verdict form', () => {
  const expression = 'action.tenant in ["acme", "globex"] ? suppress("blocked tenant") : allow()';

  it('yields suppress(reason) or allow()', () => {
    expect(run(expression)).toEqual({ type: 'suppress', reason: 'blocked tenant' });
    expect(run(expression, { action: { tenant: 'initech' } })).toEqual({ type: 'allow' });
  });

  it('suppress() without a reason', () => {
    expect(run('true ? suppress() : allow()')).toEqual({ type: 'suppress' });
  });

  it('labels the actions it can yield', () => {
    expect(expressionRule(expression).actionLabel).toBe('allow|suppress');
    expect(expressionRule('suppress("always")').actionLabel).toBe('suppress');
    expect(expressionRule(expression).conditionDisplay).toBe(expression);
  });

  it('refuses an action beside a verdict expression', () => {
    expect(issuesOf({ name: 'x', expression, action: suppressAll }, cel)[0]?.message).toMatch(/must not have an action/);
  });
});

describe('expression rules: bool form', () => {
  it('uses the rule action when true and does not match when false', () => {
    expect(run('action.payload.amount > 100', { payload: { amount: 150 } }, suppressAll)).toEqual(suppressAll);
    expect(run('action.payload.amount > 100', { payload: { amount: 50 } }, suppressAll)).toBeNull();
  });

  it('accepts any rule action', () => {
    expect(run('action.provider == "email"', {}, { type: 'reroute', target_provider: 'sms' })).toEqual({ type: 'reroute', target_provider: 'sms' });
    expect(expressionRule('true', { type: 'deduplicate', ttl_seconds: 5 }).actionLabel).toBe('deduplicate');
  });

  it('needs an action', () => {
    expect(issuesOf({ name: 'x', expression: 'action.tenant == "acme"' }, cel)[0]).toEqual({
      path: 'expression',
      message: expect.stringMatching(/yields a bool, so the rule needs an action/),
    });
  });

  it('dyn results are checked at run time', () => {
    const withAction = expressionRule('action.payload.flag', suppressAll);
    expect(withAction.evaluate(makeInput({ payload: { flag: true } }))).toEqual(suppressAll);
    expect(withAction.evaluate(makeInput({ payload: { flag: false } }))).toBeNull();
    expect(() => withAction.evaluate(makeInput({ payload: { flag: 'yes' } }))).toThrow(RuleEvaluationError);
    // The type, never the value: it comes from the payload, and the message is logged.
    expect(() => withAction.evaluate(makeInput({ payload: { flag: '4111111111111111' } }))).toThrow(
      /^the expression yielded a string \(16 characters\); expected a bool/,
    );
    expect(() => withAction.evaluate(makeInput({ payload: { flag: 4111111111111111 } }))).toThrow(/^the expression yielded an? (int|double); expected/);
  });

  it('a dyn expression without allow()/suppress() needs an action', () => {
    expect(issuesOf({ name: 'x', expression: 'action.payload.flag' }, cel)[0]?.message).toMatch(/needs an action/);
  });

  it('a dyn expression that yields a bool where a verdict was possible, without action, errors at run time', () => {
    const mixed = expressionRule('[true, allow()][action.payload.i]');
    expect(mixed.evaluate(makeInput({ payload: { i: 1 } }))).toEqual({ type: 'allow' });
    expect(() => mixed.evaluate(makeInput({ payload: { i: 0 } }))).toThrow(/yielded true but the rule has no action/);
  });

  it('refuses expressions of other static types', () => {
    expect(issuesOf({ name: 'x', expression: '"text"' }, cel)[0]?.message).toMatch(/yields string/);
    expect(issuesOf({ name: 'x', expression: '1 + 2', action: suppressAll }, cel)[0]?.message).toMatch(/yields int/);
  });
});

describe('expression rules: numbers (JSON numbers vs CEL int/double)', () => {
  const bool = (expression: string, payload: Record<string, unknown>) => run(expression, { payload }, suppressAll) !== null;

  it('compares integral payload numbers with int and double literals', () => {
    expect(bool('action.payload.amount > 100', { amount: 150 })).toBe(true);
    expect(bool('action.payload.amount > 100', { amount: 100 })).toBe(false);
    expect(bool('action.payload.amount > 100.5', { amount: 101 })).toBe(true);
    expect(bool('action.payload.amount > 100.5', { amount: 100 })).toBe(false);
    expect(bool('action.payload.count == 3', { count: 3 })).toBe(true);
    expect(bool('action.payload.count == 3.0', { count: 3 })).toBe(true);
  });

  it('compares fractional payload numbers with int and double literals', () => {
    expect(bool('action.payload.amount > 100', { amount: 100.7 })).toBe(true);
    expect(bool('action.payload.amount > 100.5', { amount: 100.7 })).toBe(true);
    expect(bool('action.payload.amount > 100.5', { amount: 100.2 })).toBe(false);
    expect(bool('action.payload.ratio == 0.5', { ratio: 0.5 })).toBe(true);
  });

  it('supports int arithmetic and list membership on payload numbers', () => {
    expect(bool('action.payload.count + 1 == 4', { count: 3 })).toBe(true);
    expect(bool('action.payload.code in [200, 201]', { code: 201 })).toBe(true);
    expect(bool('size(action.payload.items) == 2', { items: [1, 2] })).toBe(true);
    expect(bool('action.payload.items[1] == 2', { items: [1, 2] })).toBe(true);
  });

  it('keeps numbers beyond the safe integer range as doubles', () => {
    expect(bool('action.payload.big > 1.0e15', { big: 2 ** 60 })).toBe(true);
  });
});

describe('expression rules: variables and missing keys', () => {
  it('reads action fields, metadata and state', () => {
    expect(run('action.metadata.env == "prod"', { metadata: { env: 'prod' } }, suppressAll)).toEqual(suppressAll);
    expect(run('state.current == "open"', { state: { current: 'open' } }, suppressAll)).toEqual(suppressAll);
    expect(run('action.namespace + "/" + action.action_type == "billing/send_invoice"', {}, suppressAll)).toEqual(suppressAll);
  });

  it('throws RuleEvaluationError for a missing key', () => {
    const rule = expressionRule('action.payload.missing == 1', suppressAll);
    expect(() => rule.evaluate(makeInput())).toThrow(RuleEvaluationError);
    expect(() => rule.evaluate(makeInput())).toThrow(/CEL evaluation failed: No such key: missing/);
    expect(() => expressionRule('action.id == "a"', suppressAll).evaluate(makeInput())).toThrow(/No such key: id/);
  });

  it('has() guards optional keys', () => {
    const rule = expressionRule('has(action.payload.priority) && action.payload.priority == "high"', suppressAll);
    expect(rule.evaluate(makeInput())).toBeNull();
    expect(rule.evaluate(makeInput({ payload: { priority: 'high' } }))).toEqual(suppressAll);
    expect(expressionRule('has(state.current) ? suppress("tracked") : allow()').evaluate(makeInput())).toEqual({ type: 'allow' });
  });

  it('refuses unknown variables at load time', () => {
    expect(issuesOf({ name: 'x', expression: 'request.size > 1', action: suppressAll }, cel)[0]?.message).toMatch(/CEL type error: Unknown variable: request/);
  });
});

describe('expression rules: load-time checks', () => {
  it('reports syntax errors on one line', () => {
    const issue = issuesOf({ name: 'x', expression: 'action.tenant == ' }, cel)[0];
    expect(issue?.path).toBe('expression');
    expect(issue?.message).toMatch(/^CEL syntax error: /);
    expect(issue?.message).not.toContain('\n');
  });

  it('reports type errors', () => {
    expect(issuesOf({ name: 'x', expression: 'true ? allow() : false' }, cel)[0]?.message).toMatch(/CEL type error: Ternary branches/);
    expect(issuesOf({ name: 'x', expression: 'suppress(1)' }, cel)[0]?.message).toMatch(/no matching overload/);
  });

  it('bounds expression length and size', () => {
    expect(issuesOf({ name: 'x', expression: `true || ${'false || '.repeat(600)}false`, action: suppressAll }, cel)[0]?.message).toMatch(/longer than 4096/);
    const wide = `action.payload.n in [${Array.from({ length: 2100 }, (_, i) => i).join(',')}]`.slice(0, 4000);
    expect(issuesOf({ name: 'x', expression: `${wide.slice(0, wide.lastIndexOf(','))}]`, action: suppressAll }, cel)[0]?.message).toMatch(
      /maxAstNodes|maxListElements/,
    );
  });
});

describe('expression rules: regular expressions', () => {
  it('refuses matches() (backtracking engine) and points to re2Matches', () => {
    expect(issuesOf({ name: 'x', expression: 'action.tenant.matches("a.*")', action: suppressAll }, cel)[0]?.message).toMatch(
      /matches\(\) is not available.*re2Matches/,
    );
    expect(issuesOf({ name: 'x', expression: 'matches(action.tenant, "a.*")', action: suppressAll }, cel)[0]?.message).toMatch(/matches/);
  });

  it('re2Matches searches with RE2 (unanchored, like CEL matches)', () => {
    expect(run('action.tenant.re2Matches("cm")', {}, suppressAll)).toEqual(suppressAll);
    expect(run('action.tenant.re2Matches("^cm$")', {}, suppressAll)).toBeNull();
  });

  it('re2Matches stays linear on catastrophic patterns', () => {
    const started = performance.now();
    expect(run('action.payload.s.re2Matches("^(a+)+$")', { payload: { s: `${'a'.repeat(50_000)}b` } }, suppressAll)).toBeNull();
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('validates literal patterns at load time and dynamic ones at run time', () => {
    expect(issuesOf({ name: 'x', expression: 'action.tenant.re2Matches("(")', action: suppressAll }, cel)[0]?.message).toMatch(/invalid regular expression/);
    const dynamic = expressionRule('action.tenant.re2Matches(action.payload.p)', suppressAll);
    expect(dynamic.evaluate(makeInput({ payload: { p: 'ac' } }))).toEqual(suppressAll);
    expect(() => dynamic.evaluate(makeInput({ payload: { p: '(' } }))).toThrow(/invalid regular expression/);
  });
});
