import { describe, expect, it } from 'vitest';
import { conditionIssues, conditionMatches } from '../../test/rule-fixtures.js';

const field = 'action.payload.value';
const matches = (op: string, operand: unknown, value: unknown) => conditionMatches({ field, [op]: operand }, { payload: value === undefined ? {} : { value } });

describe('eq', () => {
  it('matches equal strings, numbers, booleans and null', () => {
    expect(matches('eq', 'gold', 'gold')).toBe(true);
    expect(matches('eq', 42, 42)).toBe(true);
    expect(matches('eq', true, true)).toBe(true);
    expect(matches('eq', null, null)).toBe(true);
  });

  it('does not match different values', () => {
    expect(matches('eq', 'gold', 'silver')).toBe(false);
    expect(matches('eq', 42, 43)).toBe(false);
  });

  it('treats 1 and 1.0 as equal (one JSON number)', () => {
    expect(matches('eq', 1.0, 1)).toBe(true);
    expect(matches('eq', 1, 1.0)).toBe(true);
  });

  it('never coerces types', () => {
    expect(matches('eq', '1', 1)).toBe(false);
    expect(matches('eq', 1, '1')).toBe(false);
    expect(matches('eq', true, 'true')).toBe(false);
    expect(matches('eq', 0, false)).toBe(false);
    expect(matches('eq', null, 0)).toBe(false);
  });

  it('deep-compares lists and mappings (key order irrelevant)', () => {
    expect(matches('eq', [1, { a: 2 }], [1, { a: 2 }])).toBe(true);
    expect(matches('eq', [1, 2], [2, 1])).toBe(false);
    expect(matches('eq', { a: 1, b: [2] }, { b: [2], a: 1 })).toBe(true);
    expect(matches('eq', { a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(matches('eq', { a: 1 }, [1])).toBe(false);
  });

  it('is false for an absent field, even against null', () => {
    expect(matches('eq', 'gold', undefined)).toBe(false);
    expect(matches('eq', null, undefined)).toBe(false);
  });
});

describe('not_eq (alias ne)', () => {
  it('is the negation of eq', () => {
    expect(matches('not_eq', 'gold', 'silver')).toBe(true);
    expect(matches('not_eq', 'gold', 'gold')).toBe(false);
    expect(matches('not_eq', 1, 1.0)).toBe(false);
    expect(matches('not_eq', { a: 1 }, { a: 1 })).toBe(false);
  });

  it('is true across types', () => {
    expect(matches('not_eq', '1', 1)).toBe(true);
    expect(matches('not_eq', null, false)).toBe(true);
  });

  it('is true for an absent field', () => {
    expect(matches('not_eq', 'gold', undefined)).toBe(true);
    expect(matches('not_eq', null, undefined)).toBe(true);
  });

  it('accepts ne and normalizes it to not_eq', () => {
    expect(matches('ne', 'gold', 'silver')).toBe(true);
    expect(matches('ne', 'gold', 'gold')).toBe(false);
  });
});

describe('in (alias in_list)', () => {
  it('matches a value listed', () => {
    expect(matches('in', ['gold', 'silver'], 'silver')).toBe(true);
    expect(matches('in', [1, 2, 3], 2)).toBe(true);
    expect(matches('in', [null], null)).toBe(true);
  });

  it('does not match a value not listed', () => {
    expect(matches('in', ['gold', 'silver'], 'bronze')).toBe(false);
    expect(matches('in', [], 'bronze')).toBe(false);
  });

  it('uses JSON equality: no coercion, deep comparison of composites', () => {
    expect(matches('in', ['1', '2'], 1)).toBe(false);
    expect(matches('in', [1, 2], '1')).toBe(false);
    expect(matches('in', [{ a: 1 }, [2]], { a: 1 })).toBe(true);
    expect(matches('in', [{ a: 1 }, [2]], [2])).toBe(true);
    expect(matches('in', [{ a: 1 }], { a: 2 })).toBe(false);
  });

  it('is false for an absent field', () => {
    expect(matches('in', ['gold', null], undefined)).toBe(false);
  });

  it('accepts in_list', () => {
    expect(matches('in_list', ['a', 'b'], 'b')).toBe(true);
  });

  it('requires a list at load time', () => {
    for (const operand of ['gold', 3, { a: 1 }, null]) {
      const issues = conditionIssues({ field, in: operand });
      expect(issues).toEqual([{ path: 'condition.in', message: expect.stringMatching(/in needs a list/) }]);
    }
    expect(conditionIssues({ field, in_list: 'x' })[0]?.path).toBe('condition.in_list');
  });
});
