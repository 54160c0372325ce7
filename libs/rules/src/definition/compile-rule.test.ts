import { describe, expect, it } from 'vitest';
import { RuleDefinitionError } from '../errors.js';
import { compileRuleDefinition } from './compile-rule.js';
import { NO_RUNTIMES, issuesOf, makeInput } from '../../test/rule-fixtures.js';

const condition = { field: 'action.tenant', eq: 'acme' };
const action = { type: 'suppress', reason: 'blocked' };
const api = { kind: 'api' } as const;
const compile = (def: unknown, source: Parameters<typeof compileRuleDefinition>[1] = api) => compileRuleDefinition(def, source, NO_RUNTIMES);

describe('compileRuleDefinition: rule fields', () => {
  it('applies defaults: priority 0, enabled true, no description, no intervals', () => {
    const rule = compile({ name: 'block-acme', condition, action });
    expect(rule).toMatchObject({
      name: 'block-acme',
      priority: 0,
      enabled: true,
      description: null,
      muteTimeIntervals: [],
      activeTimeIntervals: [],
      source: api,
      actionLabel: 'suppress',
    });
    expect(rule.conditionDisplay).toBe('action.tenant eq "acme"');
  });

  it('keeps every optional field', () => {
    const rule = compile({
      name: 'r',
      priority: -5,
      description: 'why this exists',
      enabled: false,
      condition,
      action,
      metadata: { owner: 'team-a' },
      mute_time_intervals: ['weekends'],
      active_time_intervals: ['business-hours'],
    });
    expect(rule).toMatchObject({
      priority: -5,
      description: 'why this exists',
      enabled: false,
      muteTimeIntervals: ['weekends'],
      activeTimeIntervals: ['business-hours'],
    });
    expect(rule.definition).toEqual({
      name: 'r',
      priority: -5,
      description: 'why this exists',
      enabled: false,
      condition,
      action,
      metadata: { owner: 'team-a' },
      mute_time_intervals: ['weekends'],
      active_time_intervals: ['business-hours'],
    });
  });

  it('evaluates to the action on a match and null otherwise', () => {
    const rule = compile({ name: 'r', condition, action });
    expect(rule.evaluate(makeInput())).toEqual(action);
    expect(rule.evaluate(makeInput({ action: { tenant: 'other' } }))).toBeNull();
  });

  it('needs name, condition and action', () => {
    expect(issuesOf({}).map((i) => i.path)).toEqual(['name', 'condition', 'action']);
  });

  it('refuses unknown keys, naming each', () => {
    expect(issuesOf({ name: 'r', condition, action, priorty: 5, timezone: 'UTC' })).toEqual([
      { path: 'priorty', message: 'unknown key "priorty"' },
      { path: 'timezone', message: 'unknown key "timezone"' },
    ]);
  });

  it('validates field types', () => {
    const paths = issuesOf({ name: '', priority: 1.5, enabled: 'yes', description: 5, metadata: { n: 1 }, mute_time_intervals: 'x', condition, action }).map(
      (i) => i.path,
    );
    expect(paths).toEqual(['name', 'priority', 'description', 'enabled', 'metadata.n', 'mute_time_intervals']);
    expect(issuesOf({ name: 'r', priority: 2 ** 31, condition, action })[0]?.path).toBe('priority');
    const controls = 'must not contain control characters, bidirectional controls or lone surrogates';
    expect(issuesOf({ name: 'bad\nname', condition, action })[0]).toEqual({ path: 'name', message: controls });
    // Names every other resource refuses: a rule is managed at /v1/rules/{name}, which no browser reaches for `..`.
    expect(issuesOf({ name: 'a\u202eb', condition, action })[0]).toEqual({ path: 'name', message: controls });
    for (const name of ['.', '..']) expect(issuesOf({ name, condition, action })[0]).toEqual({ path: 'name', message: 'must not be . or ..' });
  });

  it('refuses a definition that is not a mapping', () => {
    expect(issuesOf([1])).toEqual([{ path: '', message: 'a rule must be a mapping, got a list' }]);
    expect(issuesOf(null)[0]?.message).toMatch(/got null/);
  });

  it('reports all problems at once in a RuleDefinitionError naming the rule', () => {
    let error: unknown;
    try {
      compile({ name: 'multi', priority: 'high', condition: { field: 'action.x', eq: 1 }, action: { type: 'throttle' } });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(RuleDefinitionError);
    const definitionError = error as RuleDefinitionError;
    expect(definitionError.ruleName).toBe('multi');
    expect(definitionError.details.map((d) => d.path)).toEqual(['priority', 'condition.field', 'action.max_count', 'action.window_seconds']);
    expect(definitionError.message).toMatch(/^invalid rule "multi": priority: .*; condition.field: unknown action field "x"/);
  });
});

describe('compileRuleDefinition: canonical definition', () => {
  it('is frozen and recompiles to itself (what the API stores)', () => {
    const first = compile({
      name: 'r',
      condition: {
        any: [
          { field: 'action.tenant', ne: 'a' },
          { field: 'action.payload.n', in_list: [1, 2] },
        ],
      },
      action: { type: 'request_approval', timeout_seconds: 60 },
    });
    expect(Object.isFrozen(first.definition)).toBe(true);
    const second = compile(JSON.parse(JSON.stringify(first.definition)));
    expect(second.definition).toEqual(first.definition);
    expect(first.definition).toEqual({
      name: 'r',
      priority: 0,
      enabled: true,
      condition: {
        any: [
          { field: 'action.tenant', not_eq: 'a' },
          { field: 'action.payload.n', in: [1, 2] },
        ],
      },
      action: { type: 'require_approval', ttl_seconds: 60 },
    });
  });

  it('does not alias the caller objects', () => {
    const list = ['acme'];
    const rule = compile({ name: 'r', condition: { field: 'action.tenant', in: list }, action });
    list.push('other');
    expect(rule.evaluate(makeInput({ action: { tenant: 'other' } }))).toBeNull();
    expect(Object.isFrozen(list)).toBe(false);
  });
});

describe('compileRuleDefinition: sources and forms', () => {
  it('API bodies may use expression instead of condition', () => {
    const rule = compile({ name: 'cel', expression: 'action.tenant == "acme" ? suppress("no") : allow()' });
    expect(rule.evaluate(makeInput())).toEqual({ type: 'suppress', reason: 'no' });
    expect(rule.definition).toEqual({ name: 'cel', priority: 0, enabled: true, expression: 'action.tenant == "acme" ? suppress("no") : allow()' });
  });

  it('API bodies cannot have both condition and expression', () => {
    expect(issuesOf({ name: 'r', condition, expression: 'true', action })).toContainEqual({
      path: '',
      message: 'give either condition or expression, not both',
    });
  });

  it('YAML entries take condition rules only', () => {
    expect(issuesOf({ name: 'r', expression: 'true', action }, { kind: 'yaml', file: 'a.yaml' })).toContainEqual({
      path: 'expression',
      message: 'unknown key "expression"',
    });
  });

  it('.cel entries take expression rules only', () => {
    const issues = issuesOf({ name: 'r', condition, action }, { kind: 'cel', file: 'a.cel' });
    expect(issues).toContainEqual({ path: 'condition', message: 'unknown key "condition"' });
    expect(issues.map((i) => i.path)).toContain('expression');
  });

  it('keeps the source on the compiled rule', () => {
    expect(compile({ name: 'r', condition, action }, { kind: 'yaml', file: 'base.yaml' }).source).toEqual({ kind: 'yaml', file: 'base.yaml' });
  });
});
