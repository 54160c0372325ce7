import { afterEach, describe, expect, it } from 'vitest';
import { compileRuleDefinition } from './definition/compile-rule.js';
import { RuleEvaluationError } from './errors.js';
import { DEFAULT_EVALUATION_LIMITS, configureEvaluationLimits } from './evaluation-limits.js';
import { NO_RUNTIMES, conditionIssues, issuesOf, makeInput, ruleWithCondition } from '../test/rule-fixtures.js';

const field = 'action.payload.value';
const cel = { kind: 'cel', file: 'rules.cel' } as const;
const suppress = { type: 'suppress' };
/** The reported freezer: 9.5 s on a 30 KB field before program sizes were capped. */
const COUNTED_REPEATS = `(?s).*${'a{1000}'.repeat(145)}b`;

afterEach(() => configureEvaluationLimits(DEFAULT_EVALUATION_LIMITS));

describe('regular expressions: compiled size', () => {
  it('refuses a pattern compiling to more than 1000 instructions, naming the limit', () => {
    expect(conditionIssues({ field, matches: COUNTED_REPEATS })[0]?.message).toMatch(/would compile to about 14500\d instructions, over the limit of 1000/);
    expect(() => ruleWithCondition({ field, matches: `(?s).*${'a{99}'.repeat(10)}b` })).not.toThrow();
  });

  it('caps the instructions of all the patterns of one rule at 2000', () => {
    const big = `(?s).*${'a{99}'.repeat(9)}b`;
    const three = { all: [1, 2, 3].map(() => ({ field, matches: big })) };
    expect(conditionIssues(three)[0]).toEqual({ path: 'condition.all.2.matches', message: expect.stringMatching(/in all, over the limit of 2000/) });
    expect(() => ruleWithCondition({ all: [three.all[0], three.all[1]] })).not.toThrow();
  });

  it('applies to literal re2Matches patterns of expressions', () => {
    const issues = issuesOf({ name: 'x', expression: `action.payload.value.re2Matches("${COUNTED_REPEATS}")`, action: suppress }, cel);
    expect(issues[0]?.message).toMatch(/over the limit of 1000/);
  });
});

describe('regular expressions: scanned length', () => {
  const rule = ruleWithCondition({ field, matches: 'a+' });

  it('scans values up to rules.regex_max_input_length and refuses longer ones as an evaluation error', () => {
    configureEvaluationLimits({ regexMaxInputLength: 100 });
    expect(rule.evaluate(makeInput({ payload: { value: 'a'.repeat(100) } }))).not.toBeNull();
    expect(() => rule.evaluate(makeInput({ payload: { value: 'a'.repeat(101) } }))).toThrow(/at most 100 characters \(rules.regex_max_input_length\)/);
  });

  it('bounds the worst pattern allowed on the longest value allowed', () => {
    const worst = ruleWithCondition({ field, matches: `(?s)(.{1,100}a){1,4}b` });
    const value = Array.from({ length: DEFAULT_EVALUATION_LIMITS.regexMaxInputLength }, (_, i) => (i % 7 ? 'a' : 'b')).join('');
    const started = performance.now();
    worst.evaluate(makeInput({ payload: { value } }));
    // Generous for slow CI machines; the reported pattern took 9,500 ms on less input.
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('CEL expressions: evaluation budget', () => {
  const nested = 'action.payload.l.all(x, action.payload.l.all(y, action.payload.l.all(z, x + y + z >= 0)))';
  const list = Array.from({ length: 400 }, (_, i) => i);
  const compile = (expression: string) => compileRuleDefinition({ name: 'x', expression, action: suppress }, cel, NO_RUNTIMES);
  /** The cost budget alone: a loaded machine must not reach the 50 ms wall-time limit first. */
  const costOnly = (celMaxCost?: number) => configureEvaluationLimits({ celMaxDurationMs: 60_000, ...(celMaxCost === undefined ? {} : { celMaxCost }) });

  it('stops three nested comprehensions over 400 elements (64 million steps) with an evaluation error', () => {
    costOnly();
    const started = performance.now();
    expect(() => compile(nested).evaluate(makeInput({ payload: { l: list } }))).toThrow(RuleEvaluationError);
    expect(() => compile(nested).evaluate(makeInput({ payload: { l: list } }))).toThrow(/exceeded its evaluation budget of 100000 units/);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('lets the same expression run on a list within budget', () => {
    costOnly();
    expect(compile(nested).evaluate(makeInput({ payload: { l: list.slice(0, 40) } }))).toEqual(suppress);
  });

  it('is not absorbed by an expression that swallows the error', () => {
    costOnly();
    const absorbing = `${nested} || true`;
    expect(() => compile(absorbing).evaluate(makeInput({ payload: { l: list } }))).toThrow(/evaluation budget/);
  });

  it('charges regex scans by program size times length', () => {
    costOnly(1000);
    const scans = compile('action.payload.l.exists(x, action.payload.text.re2Matches("b{50}c"))');
    const text = 'b'.repeat(60_000);
    expect(() => scans.evaluate(makeInput({ payload: { l: [1, 2, 3, 4, 5, 6, 7, 8], text } }))).toThrow(/evaluation budget of 1000/);
  });

  it('follows rules.cel_max_cost', () => {
    costOnly(10);
    expect(() => compile('action.payload.l.all(x, x >= 0)').evaluate(makeInput({ payload: { l: list.slice(0, 11) } }))).toThrow(/budget of 10 /);
    expect(compile('action.payload.l.all(x, x >= 0)').evaluate(makeInput({ payload: { l: list.slice(0, 10) } }))).toEqual(suppress);
  });

  it('bounds the wall time of steps the units do not price (`x in list` scans a list per step)', async () => {
    const big = Array.from({ length: 60_000 }, (_, i) => i);
    const started = performance.now();
    expect(() => compile('action.payload.l.exists(x, x in action.payload.m)').evaluate(makeInput({ payload: { l: big, m: big.map((n) => -n - 1) } }))).toThrow(
      /ran longer than 50 ms \(rules.cel_max_duration_ms\)/,
    );
    // Generous for a loaded machine; unbounded, this was tens of seconds.
    expect(performance.now() - started).toBeLessThan(1500);
  });

  it('refuses cel.bind, which builds values exponentially for no step the budget sees', () => {
    const issues = issuesOf({ name: 'x', expression: 'cel.bind(a, action.payload.l + action.payload.l, size(a) > 1)', action: suppress }, cel);
    expect(issues[0]?.message).toMatch(/cel.bind\(\) is not available/);
  });

  it('bounds compiling patterns taken from the payload, one per step', () => {
    const dynamic = compile('action.payload.ps.exists(p, action.payload.text.re2Matches(p))');
    const patterns = Array.from({ length: 5000 }, (_, i) => `x{${i % 900}}y[a-z]{1,20}q${i}`);
    const started = performance.now();
    expect(() => dynamic.evaluate(makeInput({ payload: { ps: patterns, text: 'nothing' } }))).toThrow(/ran longer than 50 ms|evaluation budget/);
    expect(performance.now() - started).toBeLessThan(1500);
  });
});
