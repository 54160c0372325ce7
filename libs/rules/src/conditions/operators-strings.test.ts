import { describe, expect, it } from 'vitest';
import { conditionIssues, conditionMatches } from '../../test/rule-fixtures.js';

const field = 'action.payload.value';
const matches = (op: string, operand: unknown, value: unknown) => conditionMatches({ field, [op]: operand }, { payload: value === undefined ? {} : { value } });

describe('contains', () => {
  it('strings: substring', () => {
    expect(matches('contains', 'urgent', 'this is urgent!')).toBe(true);
    expect(matches('contains', 'urgent', 'calm')).toBe(false);
    expect(matches('contains', '', 'anything')).toBe(true);
  });

  it('lists: an element equal to the operand (deep, no coercion)', () => {
    expect(matches('contains', 'vip', ['new', 'vip'])).toBe(true);
    expect(matches('contains', 2, [1, 2, 3])).toBe(true);
    expect(matches('contains', '2', [1, 2, 3])).toBe(false);
    expect(matches('contains', { id: 1 }, [{ id: 1 }, { id: 2 }])).toBe(true);
    expect(matches('contains', 'vi', ['vip'])).toBe(false);
  });

  it('mappings: the operand is a key', () => {
    expect(matches('contains', 'email', { email: 'a@b.c', phone: null })).toBe(true);
    expect(matches('contains', 'phone', { email: 'a@b.c', phone: null })).toBe(true);
    expect(matches('contains', 'fax', { email: 'a@b.c' })).toBe(false);
    expect(matches('contains', 'toString', {})).toBe(false);
  });

  it('type mismatches are false', () => {
    expect(matches('contains', 5, 'a5b')).toBe(false);
    expect(matches('contains', 1, { '1': true })).toBe(false);
    expect(matches('contains', 'a', 42)).toBe(false);
    expect(matches('contains', 'a', true)).toBe(false);
    expect(matches('contains', null, null)).toBe(false);
  });

  it('is false for an absent field', () => {
    expect(matches('contains', 'x', undefined)).toBe(false);
  });
});

describe('starts_with and ends_with', () => {
  it('match string prefixes and suffixes', () => {
    expect(matches('starts_with', 'inv-', 'inv-2024')).toBe(true);
    expect(matches('starts_with', 'inv-', 'x-inv-2024')).toBe(false);
    expect(matches('ends_with', '.pdf', 'invoice.pdf')).toBe(true);
    expect(matches('ends_with', '.pdf', 'invoice.pdf.exe')).toBe(false);
  });

  it('are false for non-string values', () => {
    expect(matches('starts_with', '1', 123)).toBe(false);
    expect(matches('ends_with', '3', 123)).toBe(false);
    expect(matches('starts_with', 'a', ['abc'])).toBe(false);
    expect(matches('ends_with', 'c', { abc: 1 })).toBe(false);
  });

  it('are false for an absent field', () => {
    expect(matches('starts_with', 'a', undefined)).toBe(false);
    expect(matches('ends_with', 'a', undefined)).toBe(false);
  });

  it('need a string operand at load time', () => {
    expect(conditionIssues({ field, starts_with: 5 })).toEqual([{ path: 'condition.starts_with', message: 'starts_with needs a string, got number 5' }]);
    expect(conditionIssues({ field, ends_with: ['a'] })[0]?.message).toMatch(/ends_with needs a string/);
  });
});

describe('matches (anchored RE2)', () => {
  it('matches the whole string only', () => {
    expect(matches('matches', 'ab', 'ab')).toBe(true);
    expect(matches('matches', 'ab', 'xaby')).toBe(false);
    expect(matches('matches', 'ab', 'abc')).toBe(false);
    expect(matches('matches', 'ab', 'cab')).toBe(false);
    expect(matches('matches', '.*ab.*', 'xaby')).toBe(true);
  });

  it('supports RE2 syntax', () => {
    expect(matches('matches', 'inv-\\d{4}', 'inv-2024')).toBe(true);
    expect(matches('matches', '(?i)URGENT', 'urgent')).toBe(true);
    expect(matches('matches', '[a-z]+@example\\.com', 'ops@example.com')).toBe(true);
  });

  it('is false for non-string values and absent fields', () => {
    expect(matches('matches', '\\d+', 123)).toBe(false);
    expect(matches('matches', '.*', null)).toBe(false);
    expect(matches('matches', '.*', undefined)).toBe(false);
  });

  it('stays linear on a catastrophic backtracking pattern', () => {
    const started = performance.now();
    expect(matches('matches', '(a+)+$', `${'a'.repeat(50_000)}b`)).toBe(false);
    expect(matches('matches', '(a|aa)+c', 'a'.repeat(50_000))).toBe(false);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('refuses an invalid pattern, naming the rule and the operator', () => {
    const issues = conditionIssues({ field, matches: '(unclosed' });
    expect(issues).toEqual([{ path: 'condition.matches', message: expect.stringMatching(/invalid regular expression: .*missing closing \)/) }]);
  });

  it('refuses patterns RE2 does not support (lookaround, backreferences)', () => {
    expect(conditionIssues({ field, matches: '(?=a)a' })[0]?.message).toMatch(/invalid regular expression/);
    expect(conditionIssues({ field, matches: '(a)\\1' })[0]?.message).toMatch(/invalid regular expression/);
  });

  it('refuses patterns over 1024 characters and non-string patterns', () => {
    expect(conditionIssues({ field, matches: 'a'.repeat(1025) })[0]?.message).toMatch(/longer than 1024/);
    // Characters are code points: a class of 1024 in all, emoji (two UTF-16 units each) among them, passes; one more does not.
    expect(conditionMatches({ field, matches: `[${'😀'.repeat(1021)}]+` }, { payload: { value: '😀😀' } })).toBe(true);
    expect(conditionIssues({ field, matches: `[${'😀'.repeat(1022)}]+` })[0]?.message).toMatch(/longer than 1024/);
    // A character class: 1024 characters of pattern, a handful of instructions.
    expect(conditionMatches({ field, matches: `[${'a'.repeat(1021)}]+` }, { payload: { value: 'a'.repeat(1024) } })).toBe(true);
    expect(conditionIssues({ field, matches: 5 })[0]?.message).toMatch(/matches needs a regular expression string/);
  });
});
