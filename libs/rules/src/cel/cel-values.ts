import { setOwn } from '../json-values.js';
import type { EvalInput } from '../types.js';

/**
 * CEL distinguishes int (BigInt in cel-js) from double (JS number). JSON has one number type, so
 * integral numbers become ints and the rest stay doubles: `amount > 100`, `amount > 100.5` and
 * `count == 3` all behave as written, and int arithmetic (`count + 1`) type-checks. Numbers beyond
 * the safe-integer range stay doubles (their integer value is not exact anyway).
 *
 * Copy-on-write: a list or mapping without anything to convert is returned as is (cel-js never
 * mutates its input), so string-only metadata and similar subtrees cost no allocation.
 */
export function toCelValue(value: unknown): unknown {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (typeof value !== 'object' || value === null) return value;
  return Array.isArray(value) ? convertList(value) : convertMapping(value as Record<string, unknown>);
}

function convertList(list: readonly unknown[]): readonly unknown[] {
  let copy: unknown[] | null = null;
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    const converted = toCelValue(item);
    if (copy === null && converted !== item) copy = list.slice(0, i);
    if (copy !== null) copy.push(converted);
  }
  return copy ?? list;
}

function convertMapping(mapping: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | null = null;
  const keys = Object.keys(mapping);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const item = mapping[key];
    const converted = item === undefined ? undefined : toCelValue(item);
    if (copy === null && (converted !== item || item === undefined)) copy = copyKeys(mapping, keys, i);
    // Undefined members are dropped so `has(action.id)` is false for an unset optional field.
    if (copy !== null && converted !== undefined) setOwn(copy, key, converted);
  }
  return copy ?? mapping;
}

function copyKeys(mapping: Record<string, unknown>, keys: readonly string[], count: number): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) setOwn(copy, keys[i]!, mapping[keys[i]!]);
  return copy;
}

/**
 * The CEL activation for one input, converted once and shared by every expression rule of that
 * evaluation. Evaluation is synchronous and rules run in a loop over one input, so a one-entry
 * memo (by input identity) hits for all of them; it is cheaper than a WeakMap. Inputs are treated
 * as immutable: build a new EvalInput for new data.
 */
let memoInput: EvalInput | null = null;
let memoActivation: Record<string, unknown> = {};

export function celActivation(input: EvalInput): Record<string, unknown> {
  if (memoInput !== input) {
    memoActivation = { action: toCelValue(input.action), state: toCelValue(input.state) };
    memoInput = input;
  }
  return memoActivation;
}
