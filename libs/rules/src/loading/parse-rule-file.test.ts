import { describe, expect, it } from 'vitest';
import { parseRuleFile } from './parse-rule-file.js';
import { NO_RUNTIMES, makeInput } from '../../test/rule-fixtures.js';

const parse = (text: string, file = 'rules.yaml') => parseRuleFile(text, file, NO_RUNTIMES);

const YAML_RULES = `
rules:
  - name: block-spam
    priority: 1
    description: Drop obvious spam
    condition:
      all:
        - field: action.action_type
          eq: send_email
        - field: action.payload.subject
          matches: "(?i).*viagra.*"
    action:
      type: suppress
      reason: spam
  - name: dedup-invoices
    priority: 2
    enabled: false
    condition: { field: action.payload.invoice_id, ne: null }
    action: { type: deduplicate, ttl_seconds: 3600 }
    mute_time_intervals: [maintenance]
`;

describe('parseRuleFile: YAML', () => {
  it('loads condition rules with their fields and source', () => {
    const { rules, errors } = parse(YAML_RULES);
    expect(errors).toEqual([]);
    expect(rules.map((r) => [r.name, r.priority, r.enabled])).toEqual([
      ['block-spam', 1, true],
      ['dedup-invoices', 2, false],
    ]);
    expect(rules[0]?.source).toEqual({ kind: 'yaml', file: 'rules.yaml' });
    expect(rules[0]?.description).toBe('Drop obvious spam');
    expect(rules[1]?.muteTimeIntervals).toEqual(['maintenance']);
    expect(rules[1]?.definition['condition']).toEqual({ field: 'action.payload.invoice_id', not_eq: null });
    const spam = makeInput({ action: { action_type: 'send_email' }, payload: { subject: 'Cheap VIAGRA now' } });
    expect(rules[0]?.evaluate(spam)).toEqual({ type: 'suppress', reason: 'spam' });
  });

  it('reports a bad rule (file, rule, reason) and still loads the good ones', () => {
    const text = `
rules:
  - name: good-one
    condition: { field: action.tenant, eq: acme }
    action: { type: allow }
  - name: two-ops
    condition: { field: action.tenant, eq: acme, starts_with: a }
    action: { type: allow }
  - name: good-two
    condition: { field: action.tenant, eq: other }
    action: { type: allow }
`;
    const { rules, errors } = parse(text);
    expect(rules.map((r) => r.name)).toEqual(['good-one', 'good-two']);
    expect(errors).toEqual([
      {
        file: 'rules.yaml',
        rule: 'two-ops',
        message: expect.stringMatching(/^rules\[1\]: condition: a field test needs exactly one operator .*found eq, starts_with/),
      },
    ]);
  });

  it('reports a rule without a usable name by its index', () => {
    const { errors } = parse('rules:\n  - condition: { field: action.tenant, eq: a }\n    action: { type: allow }\n  - 42\n');
    expect(errors).toEqual([
      { file: 'rules.yaml', message: 'rules[0]: name: required' },
      { file: 'rules.yaml', message: 'rules[1]: a rule must be a mapping, got number 42' },
    ]);
  });

  it('reports a duplicate name within the file for the later entry', () => {
    const text = `
rules:
  - { name: same, priority: 1, condition: { field: action.tenant, eq: a }, action: { type: allow } }
  - { name: same, priority: 2, condition: { field: action.tenant, eq: b }, action: { type: allow } }
`;
    const { rules, errors } = parse(text);
    expect(rules.map((r) => r.priority)).toEqual([1]);
    expect(errors).toEqual([{ file: 'rules.yaml', rule: 'same', message: expect.stringMatching(/duplicate rule name "same"/) }]);
  });

  it('skips the whole file on a YAML syntax error', () => {
    const { rules, errors } = parse('rules:\n  - name: a\n   bad: [indent\n');
    expect(rules).toEqual([]);
    expect(errors).toEqual([{ file: 'rules.yaml', message: expect.stringMatching(/^YAML syntax error: /) }]);
    expect(errors[0]?.message).not.toContain('\n');
  });

  it('skips the file when the top level is not a mapping with a rules list', () => {
    expect(parse('- name: a\n').errors).toEqual([{ file: 'rules.yaml', message: 'the file must be a mapping with a "rules" list' }]);
    expect(parse('rules: { name: a }\n').errors).toEqual([{ file: 'rules.yaml', message: '"rules" must be a list' }]);
  });

  it('reports unknown top-level keys but loads the rules', () => {
    const { rules, errors } = parse('version: 2\nrules:\n  - { name: a, condition: { field: action.tenant, eq: a }, action: { type: allow } }\n');
    expect(rules).toHaveLength(1);
    expect(errors).toEqual([{ file: 'rules.yaml', message: expect.stringMatching(/unknown top-level key "version"/) }]);
  });

  it('treats an empty file or an empty list as no rules', () => {
    expect(parse('')).toEqual({ rules: [], errors: [] });
    expect(parse('# nothing yet\n')).toEqual({ rules: [], errors: [] });
    expect(parse('rules: []\n')).toEqual({ rules: [], errors: [] });
  });

  it('refuses wasm and semantic rules with the "not configured" reason', () => {
    const text = `
rules:
  - { name: plugin, condition: { wasm_plugin: pii }, action: { type: suppress } }
  - { name: topic, condition: { semantic_match: "refund request" }, action: { type: suppress } }
`;
    const { rules, errors } = parse(text);
    expect(rules).toEqual([]);
    expect(errors).toEqual([
      { file: 'rules.yaml', rule: 'plugin', message: expect.stringMatching(/WASM plugin runtime is not configured/) },
      { file: 'rules.yaml', rule: 'topic', message: expect.stringMatching(/embedding provider is not configured/) },
    ]);
  });
});

describe('parseRuleFile: .cel', () => {
  it('loads expression rules with the cel source', () => {
    const text = `
rules:
  - name: block-tenants
    priority: 5
    expression: 'action.tenant in ["acme", "globex"] ? suppress("tenant blocked") : allow()'
  - name: big-amounts
    expression: action.payload.amount > 1000
    action: { type: require_approval, message: big }
`;
    const { rules, errors } = parse(text, 'policies.cel');
    expect(errors).toEqual([]);
    expect(rules.map((r) => [r.name, r.source, r.actionLabel])).toEqual([
      ['block-tenants', { kind: 'cel', file: 'policies.cel' }, 'allow|suppress'],
      ['big-amounts', { kind: 'cel', file: 'policies.cel' }, 'require_approval'],
    ]);
    expect(rules[0]?.evaluate(makeInput())).toEqual({ type: 'suppress', reason: 'tenant blocked' });
    expect(rules[1]?.evaluate(makeInput({ payload: { amount: 5000 } }))).toEqual({ type: 'require_approval', message: 'big', ttl_seconds: 3600 });
  });

  it('reports bad expressions per rule', () => {
    const { rules, errors } = parse('rules:\n  - { name: ok, expression: "allow()" }\n  - { name: broken, expression: "action.tenant ==" }\n', 'a.cel');
    expect(rules.map((r) => r.name)).toEqual(['ok']);
    expect(errors).toEqual([{ file: 'a.cel', rule: 'broken', message: expect.stringMatching(/^rules\[1\]: expression: CEL syntax error/) }]);
  });
});
