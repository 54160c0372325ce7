import { describe, expect, it } from 'vitest';
import { celActivation, toCelValue } from './cel-values.js';
import { makeInput } from '../../test/rule-fixtures.js';

describe('toCelValue', () => {
  it('turns safe integers into BigInt ints and keeps other numbers as doubles', () => {
    expect(toCelValue(3)).toBe(3n);
    expect(toCelValue(-0)).toBe(0n);
    expect(toCelValue(2.5)).toBe(2.5);
    expect(toCelValue(2 ** 60)).toBe(2 ** 60);
  });

  it('converts inside lists and mappings without touching the input', () => {
    const input = { a: [1, 1.5, { b: 2 }], s: 'x' };
    expect(toCelValue(input)).toEqual({ a: [1n, 1.5, { b: 2n }], s: 'x' });
    expect(input).toEqual({ a: [1, 1.5, { b: 2 }], s: 'x' });
  });

  it('returns subtrees with nothing to convert as they are (no copy)', () => {
    const labels = { env: 'prod', tags: ['a', 'b'] };
    const converted = toCelValue({ labels, n: 1 }) as { labels: unknown };
    expect(converted.labels).toBe(labels);
    const plain = { a: 'x', b: [true, null, 1.5] };
    expect(toCelValue(plain)).toBe(plain);
  });

  it('drops undefined members (so has() is false for unset optional fields)', () => {
    expect(toCelValue({ id: undefined, tenant: 'acme' })).toEqual({ tenant: 'acme' });
    expect(Object.keys(toCelValue({ a: 'x', id: undefined, b: 'y' }) as object)).toEqual(['a', 'b']);
  });

  it('keeps "__proto__" as an ordinary own key', () => {
    const converted = toCelValue(JSON.parse('{"__proto__": {"n": 1}, "m": 2}')) as Record<string, unknown>;
    expect(Object.hasOwn(converted, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(converted)).toBe(Object.prototype);
  });
});

describe('celActivation', () => {
  it('converts once per input object and again for a new one', () => {
    const first = makeInput({ payload: { n: 1 } });
    const activation = celActivation(first);
    expect(celActivation(first)).toBe(activation);
    expect(activation['action']).toMatchObject({ tenant: 'acme', payload: { n: 1n } });
    const second = makeInput({ payload: { n: 2 }, state: { current: 'open' } });
    expect(celActivation(second)).toMatchObject({ action: { payload: { n: 2n } }, state: { current: 'open' } });
  });
});
