import { describe, expect, it } from 'vitest';
import { applyMergePatch } from './merge-patch.js';
import { deepFreeze } from './json-values.js';

describe('applyMergePatch: RFC 7386 appendix A', () => {
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('%j patched with %j is %j', (target, patch, expected) => {
    expect(applyMergePatch(target, patch)).toEqual(expected);
  });
});

describe('applyMergePatch: immutability', () => {
  it('never mutates the target or the patch', () => {
    const target = { a: { b: 1, keep: [1, 2] }, gone: true };
    const patch = { a: { b: 2, add: { deep: 1 } }, gone: null };
    const targetCopy = structuredClone(target);
    const patchCopy = structuredClone(patch);
    const result = applyMergePatch(target, patch);
    expect(result).toEqual({ a: { b: 2, keep: [1, 2], add: { deep: 1 } } });
    expect(target).toEqual(targetCopy);
    expect(patch).toEqual(patchCopy);
  });

  it('shares nothing with its inputs: the result is freely mutable even for frozen inputs', () => {
    const target = deepFreeze({ untouched: { x: [1] } });
    const patch = deepFreeze({ added: { y: [2] } });
    const result = applyMergePatch(target, patch) as { untouched: { x: number[] }; added: { y: number[] } };
    result.untouched.x.push(3);
    result.added.y.push(4);
    expect(target.untouched.x).toEqual([1]);
    expect(patch.added.y).toEqual([2]);
  });

  it('treats "__proto__" as an ordinary key', () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}}') as unknown;
    const result = applyMergePatch({}, patch) as Record<string, unknown>;
    expect(Object.hasOwn(result, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
  });
});
