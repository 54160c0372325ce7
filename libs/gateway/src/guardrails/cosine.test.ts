import { describe, expect, it } from 'vitest';
import { cosine } from './embedding-service.js';

describe('cosine', () => {
  it('is the cosine of the angle, whatever the vectors’ scale, and never NaN', () => {
    expect(cosine([1, 0], [0, 1])).toBe(0);
    expect(cosine([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 12);
    expect(cosine([1e200, 1e200], [1e200, 0])).toBeCloseTo(Math.SQRT1_2, 12); // squares overflow unscaled
    expect(cosine([1e-200, 0], [1e-200, 1e-200])).toBeCloseTo(Math.SQRT1_2, 12); // and underflow
    expect(cosine([0, 0], [1, 1])).toBe(0);
    expect(cosine([1, 2], [1, 2, 3])).toBe(0);
  });
});
