import { describe, expect, it } from 'vitest';
import { compileRuleDefinition } from './compile-rule.js';
import { NO_RUNTIMES, issuesOf } from '../../test/rule-fixtures.js';

const condition = { field: 'action.tenant', eq: 'acme' };
const actionOf = (action: unknown) => compileRuleDefinition({ name: 'r', condition, action }, { kind: 'api' }, NO_RUNTIMES).definition['action'];
const actionIssues = (action: unknown) => issuesOf({ name: 'r', condition, action });

describe('rule actions: canonical forms', () => {
  it.each([
    [{ type: 'allow' }, { type: 'allow' }],
    [
      { type: 'allow', metadata: { reviewed: true } },
      { type: 'allow', metadata: { reviewed: true } },
    ],
    [{ type: 'suppress' }, { type: 'suppress' }],
    [
      { type: 'suppress', reason: 'spam' },
      { type: 'suppress', reason: 'spam' },
    ],
    [
      { type: 'deduplicate', ttl_seconds: 300 },
      { type: 'deduplicate', ttl_seconds: 300 },
    ],
    [
      { type: 'throttle', max_count: 10, window_seconds: 60, message: 'slow down' },
      { type: 'throttle', max_count: 10, window_seconds: 60, message: 'slow down' },
    ],
    [
      { type: 'reroute', target_provider: 'sms' },
      { type: 'reroute', target_provider: 'sms' },
    ],
    [
      { type: 'modify', changes: { priority: 'high', debug: null } },
      { type: 'modify', changes: { priority: 'high', debug: null } },
    ],
    [
      { type: 'state_machine', state_machine: 'incident', fingerprint_fields: ['payload.host'] },
      { type: 'state_machine', state_machine: 'incident', fingerprint_fields: ['payload.host'] },
    ],
    [
      { type: 'chain', chain_name: 'escalate' },
      { type: 'chain', chain_name: 'escalate' },
    ],
    [
      { type: 'require_approval', message: 'big refund', ttl_seconds: 600, notify_provider: 'slack' },
      { type: 'require_approval', message: 'big refund', ttl_seconds: 600, notify_provider: 'slack' },
    ],
  ])('%j', (input, expected) => {
    expect(actionOf(input)).toEqual(expected);
  });
});

describe('rule actions: defaults', () => {
  it('group requires its wait (the spec), defaults interval 300, max size 100', () => {
    expect(actionIssues({ type: 'group', group_by: ['payload.host'] })[0]?.path).toBe('action.group_wait_seconds');
    expect(actionOf({ type: 'group', group_by: ['payload.host'], group_wait_seconds: 30 })).toEqual({
      type: 'group',
      group_by: ['payload.host'],
      group_wait_seconds: 30,
      group_interval_seconds: 300,
      max_group_size: 100,
    });
    expect(actionOf({ type: 'group', group_by: ['a'], group_wait_seconds: 0, repeat_interval_seconds: 3600, max_group_size: 5 })).toMatchObject({
      group_wait_seconds: 0,
      repeat_interval_seconds: 3600,
      max_group_size: 5,
    });
  });

  it('llm_guardrail defaults block_on_flag to true', () => {
    expect(actionOf({ type: 'llm_guardrail', evaluator_name: 'toxicity' })).toEqual({ type: 'llm_guardrail', evaluator_name: 'toxicity', block_on_flag: true });
    expect(actionOf({ type: 'llm_guardrail', evaluator_name: 'toxicity', block_on_flag: false, send_to: 'review' })).toMatchObject({
      block_on_flag: false,
      send_to: 'review',
    });
  });

  it('require_approval defaults ttl_seconds to one hour', () => {
    expect(actionOf({ type: 'require_approval', message: 'check' })).toEqual({ type: 'require_approval', message: 'check', ttl_seconds: 3600 });
  });
});

describe('rule actions: aliases', () => {
  it('request_approval with timeout_seconds becomes require_approval with ttl_seconds', () => {
    expect(actionOf({ type: 'request_approval', timeout_seconds: 120, notify_provider: 'slack' })).toEqual({
      type: 'require_approval',
      ttl_seconds: 120,
      notify_provider: 'slack',
    });
    expect(actionOf({ type: 'require_approval', timeout_seconds: 90 })).toEqual({ type: 'require_approval', ttl_seconds: 90 });
  });

  it('chain accepts chain as chain_name', () => {
    expect(actionOf({ type: 'chain', chain: 'escalate' })).toEqual({ type: 'chain', chain_name: 'escalate' });
  });

  it('refuses an alias given beside its canonical field', () => {
    expect(actionIssues({ type: 'require_approval', ttl_seconds: 1, timeout_seconds: 2 })).toEqual([
      { path: 'action.timeout_seconds', message: 'timeout_seconds is an alias of ttl_seconds; give only one of them' },
    ]);
    expect(actionIssues({ type: 'chain', chain: 'a', chain_name: 'b' })[0]?.path).toBe('action.chain');
  });

  it('does not accept aliases on other action types', () => {
    expect(actionIssues({ type: 'deduplicate', timeout_seconds: 5 })).toEqual(
      expect.arrayContaining([{ path: 'action.timeout_seconds', message: 'unknown key "timeout_seconds"' }]),
    );
  });
});

describe('rule actions: validation', () => {
  it('needs a known type', () => {
    expect(actionIssues({ type: 'deny' })[0]).toEqual({
      path: 'action.type',
      message: expect.stringMatching(/unknown action type .*allow, suppress.*got string "deny"/),
    });
    expect(actionIssues({ reason: 'x' })[0]?.message).toMatch(/got none/);
    expect(actionIssues('suppress')[0]).toEqual({ path: 'action', message: expect.stringMatching(/must be a mapping/) });
  });

  it('refuses unknown keys, naming them', () => {
    expect(actionIssues({ type: 'suppress', reasn: 'typo' })).toEqual([{ path: 'action.reasn', message: 'unknown key "reasn"' }]);
  });

  it('deduplicate needs a positive integer ttl_seconds', () => {
    expect(actionIssues({ type: 'deduplicate' })[0]?.path).toBe('action.ttl_seconds');
    expect(actionIssues({ type: 'deduplicate', ttl_seconds: 0 })[0]?.path).toBe('action.ttl_seconds');
    expect(actionIssues({ type: 'deduplicate', ttl_seconds: 1.5 })[0]?.path).toBe('action.ttl_seconds');
    expect(actionIssues({ type: 'deduplicate', ttl_seconds: '60' })[0]?.path).toBe('action.ttl_seconds');
  });

  it('throttle needs max_count >= 1 and window_seconds >= 1', () => {
    expect(actionIssues({ type: 'throttle', max_count: 0, window_seconds: 60 })[0]?.path).toBe('action.max_count');
    expect(actionIssues({ type: 'throttle', max_count: 5, window_seconds: 0 })[0]?.path).toBe('action.window_seconds');
    expect(actionIssues({ type: 'throttle', max_count: 5 })[0]?.path).toBe('action.window_seconds');
  });

  it('modify needs changes to be an object', () => {
    for (const changes of [[1, 2], 'x', null, 5]) {
      expect(actionIssues({ type: 'modify', changes })[0]).toEqual({ path: 'action.changes', message: expect.stringMatching(/changes must be an object/) });
    }
    expect(actionIssues({ type: 'modify' })[0]?.path).toBe('action.changes');
  });

  it('group needs a non-empty group_by', () => {
    expect(actionIssues({ type: 'group' })[0]?.path).toBe('action.group_by');
    expect(actionIssues({ type: 'group', group_by: [] })[0]?.path).toBe('action.group_by');
  });

  it('reroute, chain, state_machine and llm_guardrail need their names', () => {
    expect(actionIssues({ type: 'reroute' })[0]?.path).toBe('action.target_provider');
    expect(actionIssues({ type: 'reroute', target_provider: '' })[0]?.path).toBe('action.target_provider');
    expect(actionIssues({ type: 'chain' })[0]?.path).toBe('action.chain_name');
    expect(actionIssues({ type: 'state_machine' })[0]?.path).toBe('action.state_machine');
    expect(actionIssues({ type: 'llm_guardrail' })[0]?.path).toBe('action.evaluator_name');
  });
});

describe('rule actions: limits', () => {
  const DAYS_30 = 2_592_000;
  it.each([
    [{ type: 'deduplicate', ttl_seconds: DAYS_30 }, 'ttl_seconds', `must be <= ${DAYS_30} (30 days)`],
    [{ type: 'throttle', max_count: 1_000_000_000, window_seconds: DAYS_30 }, 'window_seconds', `must be <= ${DAYS_30} (30 days)`],
    [{ type: 'throttle', max_count: 1_000_000_000, window_seconds: 60 }, 'max_count', 'must be <= 1000000000'],
    [{ type: 'group', group_by: ['a'], group_wait_seconds: DAYS_30 }, 'group_wait_seconds', `must be <= ${DAYS_30} (30 days)`],
    [{ type: 'group', group_by: ['a'], group_wait_seconds: 0, group_interval_seconds: DAYS_30 }, 'group_interval_seconds', `must be <= ${DAYS_30} (30 days)`],
    [{ type: 'group', group_by: ['a'], group_wait_seconds: 0, repeat_interval_seconds: DAYS_30 }, 'repeat_interval_seconds', `must be <= ${DAYS_30} (30 days)`],
    [{ type: 'group', group_by: ['a'], group_wait_seconds: 0, max_group_size: 1000 }, 'max_group_size', 'must be <= 1000'],
    [{ type: 'require_approval', ttl_seconds: DAYS_30 }, 'ttl_seconds', `must be <= ${DAYS_30} (30 days)`],
    [{ type: 'request_approval', timeout_seconds: DAYS_30 }, 'timeout_seconds', `must be <= ${DAYS_30} (30 days)`],
  ])('%j is the largest accepted %s', (atMax, field, message) => {
    expect(() => actionOf(atMax)).not.toThrow();
    const over = { ...atMax, [field]: ((atMax as Record<string, unknown>)[field] as number) + 1 };
    // An alias is reported under the name the definition used.
    expect(actionIssues(over)).toEqual([{ path: `action.${field}`, message }]);
  });

  it('refuses the value that made every matching dispatch answer 500', () => {
    expect(actionIssues({ type: 'group', group_by: ['a'], group_wait_seconds: Number.MAX_SAFE_INTEGER })).toEqual([
      { path: 'action.group_wait_seconds', message: `must be <= ${DAYS_30} (30 days)` },
    ]);
  });

  it('group_wait_seconds may be 0; the other durations and counts start at 1', () => {
    expect(actionOf({ type: 'group', group_by: ['a'], group_wait_seconds: 0 })).toMatchObject({ group_wait_seconds: 0 });
    expect(actionIssues({ type: 'group', group_by: ['a'], group_wait_seconds: -1 })).toEqual([{ path: 'action.group_wait_seconds', message: 'must be >= 0' }]);
    expect(actionIssues({ type: 'group', group_by: ['a'], group_wait_seconds: 0, max_group_size: 0 })).toEqual([
      { path: 'action.max_group_size', message: 'must be >= 1' },
    ]);
  });
});

describe('rule actions: immutability', () => {
  it('the decided action is frozen and does not alias the input', () => {
    const changes = { nested: { a: 1 } };
    const rule = compileRuleDefinition({ name: 'r', condition, action: { type: 'modify', changes } }, { kind: 'api' }, NO_RUNTIMES);
    changes.nested.a = 2;
    const decided = rule.definition['action'] as { changes: { nested: { a: number } } };
    expect(decided.changes.nested.a).toBe(1);
    expect(Object.isFrozen(decided.changes.nested)).toBe(true);
    expect(Object.isFrozen(changes)).toBe(false);
  });
});
