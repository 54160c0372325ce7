import { RE2JS } from 're2js';
import { deepEqual } from '../json-values.js';
import { describeValue } from '../definition/issues.js';
import { MAX_REGEX_PROGRAM_SIZE, assertRegexInput } from '../evaluation-limits.js';
import { estimatedProgramSize } from './regex-size-estimate.js';

/** Canonical operator names, in the order listed in messages. */
export const OPERATORS = ['eq', 'not_eq', 'in', 'contains', 'starts_with', 'ends_with', 'matches', 'gt', 'gte', 'lt', 'lte'] as const;
export type OperatorName = (typeof OPERATORS)[number];

/** Input spellings → canonical name (`ne` and `in_list` are the reference implementation's names). */
export const OPERATOR_SPELLINGS: Readonly<Record<string, OperatorName>> = Object.freeze({
  ...Object.fromEntries(OPERATORS.map((op) => [op, op])),
  ne: 'not_eq',
  in_list: 'in',
});

const MAX_REGEX_LENGTH = 1024;

/**
 * A compiled operator: tests the field value, where `undefined` means the field is absent.
 * Field tests never throw: absent fields and type mismatches simply do not match (except
 * not_eq, which is the negation of eq and so holds for them).
 */
type ValuePredicate = (value: unknown) => boolean;

/** `regexProgramSize`: what a `matches` test costs, summed per rule against its budget. */
export type OperatorResult = { ok: true; test: ValuePredicate; regexProgramSize?: number } | { ok: false; message: string };

export function compileOperator(op: OperatorName, operand: unknown): OperatorResult {
  switch (op) {
    case 'eq':
      return { ok: true, test: equalsTest(operand) };
    case 'not_eq': {
      const eq = equalsTest(operand);
      return { ok: true, test: (v) => !eq(v) };
    }
    case 'in':
      return Array.isArray(operand) ? { ok: true, test: inListTest(operand) } : fail(`in needs a list, got ${describeValue(operand)}`);
    case 'contains':
      return { ok: true, test: containsTest(operand) };
    case 'starts_with':
      if (typeof operand !== 'string') return fail(`starts_with needs a string, got ${describeValue(operand)}`);
      return { ok: true, test: (v) => typeof v === 'string' && v.startsWith(operand) };
    case 'ends_with':
      if (typeof operand !== 'string') return fail(`ends_with needs a string, got ${describeValue(operand)}`);
      return { ok: true, test: (v) => typeof v === 'string' && v.endsWith(operand) };
    case 'matches':
      return matchesTest(operand);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return orderingTest(op, operand);
  }
}

function fail(message: string): OperatorResult {
  return { ok: false, message };
}

function isPrimitive(value: unknown): value is string | number | boolean | null {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

function equalsTest(operand: unknown): ValuePredicate {
  // Primitives: `===` is JSON equality for them and skips the recursive walk.
  if (isPrimitive(operand)) return (v) => v === operand;
  return (v) => v !== undefined && deepEqual(v, operand);
}

function inListTest(list: readonly unknown[]): ValuePredicate {
  const primitives = new Set<unknown>(list.filter(isPrimitive));
  const composites = list.filter((item) => !isPrimitive(item));
  return (v) => {
    if (v === undefined) return false;
    if (primitives.has(v)) return true;
    for (let i = 0; i < composites.length; i++) if (deepEqual(v, composites[i])) return true;
    return false;
  };
}

/** Strings: substring. Lists: an element deep-equal to the operand. Mappings: the operand is a key. */
function containsTest(operand: unknown): ValuePredicate {
  const key = typeof operand === 'string' ? operand : null;
  return (v) => {
    if (typeof v === 'string') return key !== null && v.includes(key);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) if (deepEqual(v[i], operand)) return true;
      return false;
    }
    if (typeof v === 'object' && v !== null) return key !== null && Object.hasOwn(v, key);
    return false;
  };
}

/** Anchored: the whole string must match (RE2 syntax, linear time). */
function matchesTest(pattern: unknown): OperatorResult {
  if (typeof pattern !== 'string') return fail(`matches needs a regular expression string, got ${describeValue(pattern)}`);
  const compiled = compileRe2(pattern);
  if (!compiled.ok) return compiled;
  const regex = compiled.regex;
  const test = (v: unknown) => {
    if (typeof v !== 'string') return false;
    assertRegexInput(v);
    return regex.testExact(v);
  };
  return { ok: true, test, regexProgramSize: regex.programSize() };
}

export type Re2Result = { ok: true; regex: RE2JS } | { ok: false; message: string };

/** How far over the limit a pattern's estimated size must be to be refused uncompiled (the estimate is rough). */
const ESTIMATE_MARGIN = 2;

/**
 * Compiles an RE2 pattern, bounding its length and its compiled size: RE2 is linear in the
 * input, but with a factor of the program size once its DFA cache overflows (145 counted
 * repeats of `a{1000}` scan 30 KB in seconds). The message says which limit refused it.
 */
export function compileRe2(pattern: string, bounds: { maxLength?: number; maxProgramSize?: number; maxEstimatedSize?: number } = {}): Re2Result {
  const { maxLength = MAX_REGEX_LENGTH, maxProgramSize = MAX_REGEX_PROGRAM_SIZE } = bounds;
  // Characters are code points (an emoji is one, not two UTF-16 units); counted only past the cheap bound.
  if (pattern.length > maxLength && (pattern.length > 2 * maxLength || [...pattern].length > maxLength)) {
    return { ok: false, message: `regular expression is longer than ${maxLength} characters` };
  }
  // Clearly too big is refused before compiling it, which would take time in proportion.
  const limit = bounds.maxEstimatedSize ?? maxProgramSize;
  const estimate = estimatedProgramSize(pattern);
  if (estimate > ESTIMATE_MARGIN * limit) {
    return {
      ok: false,
      message: `regular expression would compile to about ${estimate} instructions, over the limit of ${limit} (use fewer or smaller counted repeats)`,
    };
  }
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(pattern);
  } catch (err) {
    return { ok: false, message: `invalid regular expression: ${err instanceof Error ? err.message : String(err)}` };
  }
  const size = regex.programSize();
  if (size > maxProgramSize) {
    return {
      ok: false,
      message: `regular expression compiles to ${size} instructions, over the limit of ${maxProgramSize} (use fewer or smaller counted repeats)`,
    };
  }
  return { ok: true, regex };
}

/** Numbers compare with numbers, strings with strings (UTF-16 code unit order); anything else is false. */
function orderingTest(op: 'gt' | 'gte' | 'lt' | 'lte', operand: unknown): OperatorResult {
  if (typeof operand === 'number') {
    const n = operand;
    switch (op) {
      case 'gt':
        return { ok: true, test: (v) => typeof v === 'number' && v > n };
      case 'gte':
        return { ok: true, test: (v) => typeof v === 'number' && v >= n };
      case 'lt':
        return { ok: true, test: (v) => typeof v === 'number' && v < n };
      case 'lte':
        return { ok: true, test: (v) => typeof v === 'number' && v <= n };
    }
  }
  if (typeof operand === 'string') {
    const s = operand;
    switch (op) {
      case 'gt':
        return { ok: true, test: (v) => typeof v === 'string' && v > s };
      case 'gte':
        return { ok: true, test: (v) => typeof v === 'string' && v >= s };
      case 'lt':
        return { ok: true, test: (v) => typeof v === 'string' && v < s };
      case 'lte':
        return { ok: true, test: (v) => typeof v === 'string' && v <= s };
    }
  }
  return fail(`${op} needs a number or a string, got ${describeValue(operand)}`);
}
