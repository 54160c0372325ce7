import { describe, expect, it } from 'vitest';
import { compileRuleDefinition } from '../definition/compile-rule.js';
import type { CompiledRule, TraceOptions } from '../types.js';
import { RuleSet } from './rule-set.js';
import { NO_RUNTIMES, makeInput } from '../../test/rule-fixtures.js';

const acme = { field: 'action.tenant', eq: 'acme' };
const never = { field: 'action.tenant', eq: 'nobody' };
const rule = (name: string, priority: number, condition: unknown, extra: Record<string, unknown> = {}): CompiledRule =>
  compileRuleDefinition({ name, priority, condition, action: { type: 'suppress', reason: name }, ...extra }, { kind: 'yaml', file: 'base.yaml' }, NO_RUNTIMES);
const broken = (name: string, priority: number): CompiledRule =>
  compileRuleDefinition({ name, priority, expression: 'action.payload.missing == 1 ? suppress("x") : allow()' }, { kind: 'cel', file: 'p.cel' }, NO_RUNTIMES);
const opts = (over: Partial<TraceOptions> = {}): TraceOptions => ({ includeDisabled: false, evaluateAll: false, isEnabled: (r) => r.enabled, ...over });

describe('RuleSet.trace entries', () => {
  it('describes each evaluated rule per the spec', () => {
    const set = new RuleSet([rule('miss', 1, never, { description: 'never matches' }), rule('hit', 2, acme)]);
    const outcome = set.trace(makeInput(), opts());
    expect(outcome.decision?.rule.name).toBe('hit');
    expect(outcome.trace).toEqual([
      {
        rule_name: 'miss',
        priority: 1,
        enabled: true,
        condition_display: 'action.tenant eq "nobody"',
        result: 'not_matched',
        evaluation_duration_us: expect.any(Number),
        action: 'suppress',
        source: 'yaml:base.yaml',
        description: 'never matches',
        skip_reason: null,
        error: null,
      },
      expect.objectContaining({ rule_name: 'hit', result: 'matched', action: 'suppress', description: null }),
    ]);
    for (const entry of outcome.trace) expect(Number.isInteger(entry.evaluation_duration_us)).toBe(true);
    expect(outcome).toMatchObject({ evaluated: 2, skipped: 0, hasErrors: false, erroredBeforeMatch: false });
  });

  it('lists rules after the first match as skipped (earlier_rule_matched)', () => {
    const set = new RuleSet([rule('hit', 1, acme), rule('later', 2, acme), rule('later-miss', 3, never)]);
    const outcome = set.trace(makeInput(), opts());
    expect(outcome.trace.map((e) => [e.rule_name, e.result, e.skip_reason])).toEqual([
      ['hit', 'matched', null],
      ['later', 'skipped', 'earlier_rule_matched'],
      ['later-miss', 'skipped', 'earlier_rule_matched'],
    ]);
    expect(outcome).toMatchObject({ evaluated: 1, skipped: 2 });
  });

  it('evaluateAll evaluates every rule; the decision stays the first match', () => {
    const set = new RuleSet([rule('hit', 1, acme), rule('also', 2, acme), rule('miss', 3, never)]);
    const outcome = set.trace(makeInput(), opts({ evaluateAll: true }));
    expect(outcome.decision?.rule.name).toBe('hit');
    expect(outcome.trace.map((e) => [e.rule_name, e.result])).toEqual([
      ['hit', 'matched'],
      ['also', 'matched'],
      ['miss', 'not_matched'],
    ]);
    expect(outcome).toMatchObject({ evaluated: 3, skipped: 0 });
  });

  it('lists disabled rules only with includeDisabled, as skipped (disabled)', () => {
    const set = new RuleSet([rule('off', 1, acme, { enabled: false }), rule('on', 2, never)]);
    expect(set.trace(makeInput(), opts()).trace.map((e) => e.rule_name)).toEqual(['on', '(default fallthrough)']);
    const outcome = set.trace(makeInput(), opts({ includeDisabled: true }));
    expect(outcome.trace[0]).toMatchObject({ rule_name: 'off', enabled: false, result: 'skipped', skip_reason: 'disabled', evaluation_duration_us: 0 });
    expect(outcome).toMatchObject({ evaluated: 1, skipped: 1 });
  });

  it('uses the live enabled flag', () => {
    const set = new RuleSet([rule('off-by-flag', 1, acme)]);
    const outcome = set.trace(makeInput(), opts({ includeDisabled: true, isEnabled: () => false }));
    expect(outcome.trace[0]).toMatchObject({ enabled: false, skip_reason: 'disabled' });
    expect(outcome.decision).toBeNull();
  });

  it('a disabled rule after a match keeps skip_reason disabled', () => {
    const set = new RuleSet([rule('hit', 1, acme), rule('off', 2, acme, { enabled: false })]);
    expect(set.trace(makeInput(), opts({ includeDisabled: true })).trace[1]).toMatchObject({ rule_name: 'off', skip_reason: 'disabled' });
  });
});

describe('RuleSet.trace fallthrough and errors', () => {
  it('appends the default fallthrough entry when no rule matches', () => {
    const outcome = new RuleSet([rule('miss', 1, never)]).trace(makeInput(), opts());
    expect(outcome.decision).toBeNull();
    expect(outcome.trace.at(-1)).toEqual({
      rule_name: '(default fallthrough)',
      priority: 2147483647,
      enabled: true,
      condition_display: 'no rules matched',
      result: 'matched',
      evaluation_duration_us: 0,
      action: 'allow',
      source: 'system',
      description: null,
      skip_reason: null,
      error: null,
    });
    expect(outcome.evaluated).toBe(1);
  });

  it('appends the fallthrough for an empty rule set', () => {
    expect(new RuleSet([]).trace(makeInput(), opts()).trace.map((e) => e.rule_name)).toEqual(['(default fallthrough)']);
  });

  it('records an error before any match: erroredBeforeMatch, message on the entry', () => {
    const outcome = new RuleSet([broken('broken', 1), rule('hit', 2, acme)]).trace(makeInput(), opts());
    expect(outcome).toMatchObject({ hasErrors: true, erroredBeforeMatch: true, evaluated: 2 });
    expect(outcome.decision?.rule.name).toBe('hit');
    expect(outcome.trace[0]).toMatchObject({
      rule_name: 'broken',
      result: 'error',
      source: 'cel:p.cel',
      action: 'allow|suppress',
      error: expect.stringMatching(/No such key: missing/),
    });
  });

  it('an error after the match (evaluateAll) sets hasErrors only', () => {
    const outcome = new RuleSet([rule('hit', 1, acme), broken('broken', 2)]).trace(makeInput(), opts({ evaluateAll: true }));
    expect(outcome).toMatchObject({ hasErrors: true, erroredBeforeMatch: false });
  });

  it('an expression rule entry names the action it actually decided', () => {
    const allowRule = compileRuleDefinition({ name: 'cel', expression: 'true ? allow() : suppress("x")' }, { kind: 'api' }, NO_RUNTIMES);
    const outcome = new RuleSet([allowRule]).trace(makeInput(), opts());
    expect(outcome.trace).toEqual([expect.objectContaining({ rule_name: 'cel', result: 'matched', action: 'allow', source: 'api' })]);
  });
});
