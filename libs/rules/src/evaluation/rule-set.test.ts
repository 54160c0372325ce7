import { describe, expect, it, vi } from 'vitest';
import { compileRuleDefinition } from '../definition/compile-rule.js';
import { RuleEvaluationError } from '../errors.js';
import type { CompiledRule } from '../types.js';
import { RuleSet } from './rule-set.js';
import { NO_RUNTIMES, makeInput } from '../../test/rule-fixtures.js';

const rule = (name: string, priority: number, condition: unknown = { field: 'action.tenant', eq: 'acme' }, enabled = true): CompiledRule =>
  compileRuleDefinition({ name, priority, enabled, condition, action: { type: 'suppress', reason: name } }, { kind: 'api' }, NO_RUNTIMES);
const celRule = (name: string, priority: number, expression: string): CompiledRule =>
  compileRuleDefinition({ name, priority, expression }, { kind: 'api' }, NO_RUNTIMES);
const always = () => true;
const never = { field: 'action.tenant', eq: 'nobody' };

describe('RuleSet ordering and lookup', () => {
  it('lists rules by ascending priority, ties by name', () => {
    const set = new RuleSet([rule('zeta', 5), rule('beta', 1), rule('alpha', 5), rule('neg', -3)]);
    expect(set.list().map((r) => r.name)).toEqual(['neg', 'beta', 'alpha', 'zeta']);
    expect(set.size).toBe(4);
  });

  it('finds rules by name', () => {
    const set = new RuleSet([rule('a', 1)]);
    expect(set.get('a')?.name).toBe('a');
    expect(set.get('b')).toBeUndefined();
  });

  it('refuses duplicate names', () => {
    expect(() => new RuleSet([rule('a', 1), rule('a', 2)])).toThrow(/duplicate rule name "a"/);
  });

  it('does not reorder the array it was given', () => {
    const rules = [rule('b', 2), rule('a', 1)];
    new RuleSet(rules);
    expect(rules.map((r) => r.name)).toEqual(['b', 'a']);
  });
});

describe('RuleSet.evaluate', () => {
  it('returns null (allow) with no rules or no match', () => {
    expect(new RuleSet([]).evaluate(makeInput(), always)).toBeNull();
    expect(new RuleSet([rule('a', 1, never)]).evaluate(makeInput(), always)).toBeNull();
  });

  it('the first matching rule in priority order decides', () => {
    const set = new RuleSet([rule('late', 10), rule('miss', 1, never), rule('early', 5), rule('tie-b', 7), rule('tie-a', 7)]);
    const decision = set.evaluate(makeInput(), always);
    expect(decision?.rule.name).toBe('early');
    expect(decision?.action).toEqual({ type: 'suppress', reason: 'early' });
  });

  it('breaks priority ties by name', () => {
    expect(new RuleSet([rule('tie-b', 7), rule('tie-a', 7)]).evaluate(makeInput(), always)?.rule.name).toBe('tie-a');
  });

  it('skips rules the enabled predicate rejects (the live flag, not the definition)', () => {
    const set = new RuleSet([rule('first', 1), rule('second', 2), rule('defined-off', 0, undefined, false)]);
    expect(set.evaluate(makeInput(), (r) => r.name !== 'first')?.rule.name).toBe('defined-off');
    expect(set.evaluate(makeInput(), (r) => r.enabled && r.name !== 'first')?.rule.name).toBe('second');
  });

  it('an allow() verdict stops evaluation (first match decides allow)', () => {
    const set = new RuleSet([celRule('allow-acme', 1, 'action.tenant == "acme" ? allow() : suppress("other")'), rule('block', 2)]);
    expect(set.evaluate(makeInput(), always)).toMatchObject({ rule: { name: 'allow-acme' }, action: { type: 'allow' } });
  });

  it('reports erroring rules to onError and treats them as not matching', () => {
    const broken = celRule('broken', 1, 'action.payload.missing > 1 ? suppress("x") : allow()');
    const onError = vi.fn();
    const decision = new RuleSet([broken, rule('next', 2)]).evaluate(makeInput(), always, onError);
    expect(decision?.rule.name).toBe('next');
    expect(onError).toHaveBeenCalledTimes(1);
    expect(onError.mock.calls[0]?.[0]).toBe(broken);
    expect(onError.mock.calls[0]?.[1]).toBeInstanceOf(RuleEvaluationError);
  });

  it('survives errors without an onError callback', () => {
    const broken = celRule('broken', 1, 'action.payload.missing > 1 ? suppress("x") : allow()');
    expect(new RuleSet([broken]).evaluate(makeInput(), always)).toBeNull();
  });
});
