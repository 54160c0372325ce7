import { describe, expect, it } from 'vitest';
import * as rules from './index.js';

describe('@sluice/rules public API', () => {
  it('exports the engine entry points', () => {
    for (const name of [
      'RuleSet',
      'compileRuleDefinition',
      'parseRuleFile',
      'loadRuleDirectory',
      'RuleDefinitionError',
      'RuleEvaluationError',
      'applyMergePatch',
      'playgroundContext',
      'formatRuleSource',
      'FALLTHROUGH_ENTRY',
      'RULE_ACTION_TYPES',
    ]) {
      expect(rules, name).toHaveProperty(name);
    }
  });

  it('lists every rule action type', () => {
    expect([...rules.RULE_ACTION_TYPES].sort()).toEqual(
      ['allow', 'chain', 'deduplicate', 'group', 'llm_guardrail', 'modify', 'require_approval', 'reroute', 'state_machine', 'suppress', 'throttle'].sort(),
    );
  });

  it('formats sources as listings show them', () => {
    expect(rules.formatRuleSource({ kind: 'yaml', file: 'base.yaml' })).toBe('yaml:base.yaml');
    expect(rules.formatRuleSource({ kind: 'cel', file: 'p.cel' })).toBe('cel:p.cel');
    expect(rules.formatRuleSource({ kind: 'api' })).toBe('api');
  });
});
