import { describe, expect, it } from 'vitest';
import { conditionIssues, conditionMatches } from '../../test/rule-fixtures.js';

const field = 'action.payload.value';
const matches = (op: string, operand: unknown, value: unknown) => conditionMatches({ field, [op]: operand }, { payload: value === undefined ? {} : { value } });

describe('gt, gte, lt, lte on numbers', () => {
  it.each([
    ['gt', 100, 150, true],
    ['gt', 100, 100, false],
    ['gt', 100, 99.5, false],
    ['gte', 100, 100, true],
    ['gte', 100, 99.99, false],
    ['lt', 100, 99.5, true],
    ['lt', 100, 100, false],
    ['lte', 100, 100, true],
    ['lte', 100, 100.01, false],
    ['gt', 100.5, 101, true],
    ['gt', -1, 0, true],
  ] as const)('%s %s against %s → %s', (op, operand, value, expected) => {
    expect(matches(op, operand, value)).toBe(expected);
  });
});

describe('gt, gte, lt, lte on strings (lexicographic)', () => {
  it.each([
    ['gt', 'b', 'c', true],
    ['gt', 'b', 'b', false],
    ['gte', 'b', 'b', true],
    ['lt', 'b', 'a', true],
    ['lte', 'b', 'ba', false],
    ['gt', '2024-01-01', '2024-06-30', true],
    ['lt', '10', '9', false],
  ] as const)('%s %j against %j → %s', (op, operand, value, expected) => {
    expect(matches(op, operand, value)).toBe(expected);
  });
});

describe('ordering type mismatches and absent fields', () => {
  it.each(['gt', 'gte', 'lt', 'lte'])('%s never coerces: number operand vs string value and the reverse are false', (op) => {
    expect(matches(op, 5, '5')).toBe(false);
    expect(matches(op, 5, '50')).toBe(false);
    expect(matches(op, '5', 5)).toBe(false);
    expect(matches(op, '5', 50)).toBe(false);
  });

  it.each(['gt', 'gte', 'lt', 'lte'])('%s is false for booleans, null, lists and mappings', (op) => {
    for (const value of [true, false, null, [1], { a: 1 }]) {
      expect(matches(op, 0, value)).toBe(false);
      expect(matches(op, '', value)).toBe(false);
    }
  });

  it.each(['gt', 'gte', 'lt', 'lte'])('%s is false for an absent field', (op) => {
    expect(matches(op, 0, undefined)).toBe(false);
    expect(matches(op, '', undefined)).toBe(false);
  });

  it('needs a number or string operand at load time', () => {
    for (const operand of [true, null, [1], { a: 1 }]) {
      expect(conditionIssues({ field, gt: operand })[0]).toEqual({ path: 'condition.gt', message: expect.stringMatching(/gt needs a number or a string/) });
    }
  });
});
