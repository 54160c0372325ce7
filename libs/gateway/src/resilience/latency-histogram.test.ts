import { describe, expect, it } from 'vitest';
import { LATENCY_BOUNDS_MS, bucketOf, quantile } from './latency-histogram.js';

const histogramOf = (values: number[]) => {
  const counts = Array(LATENCY_BOUNDS_MS.length + 1).fill(0) as number[];
  for (const v of values) counts[bucketOf(v)] = (counts[bucketOf(v)] ?? 0) + 1;
  return counts;
};

describe('latency histogram', () => {
  it('puts a value in the first bucket whose bound holds it; beyond the last, the overflow bucket', () => {
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(1)).toBe(0);
    expect(bucketOf(1.01)).toBe(1);
    expect(bucketOf(45)).toBe(LATENCY_BOUNDS_MS.indexOf(50));
    expect(bucketOf(10 ** 6)).toBe(LATENCY_BOUNDS_MS.length);
  });

  it('estimates each quantile inside the bucket of the true value', () => {
    const values = Array.from({ length: 1000 }, (_, i) => (i * 7919) % 1000); // 0..999, shuffled
    const counts = histogramOf(values);
    for (const q of [0.5, 0.9, 0.95, 0.99]) {
      const truth = [...values].sort((a, b) => a - b)[Math.ceil(q * values.length) - 1] as number;
      expect(bucketOf(quantile(counts, q)), `q=${q}`).toBe(bucketOf(truth));
    }
  });

  it('is 0 when empty, and the last bound for the overflow bucket', () => {
    expect(quantile(histogramOf([]), 0.5)).toBe(0);
    expect(quantile(histogramOf([10 ** 6]), 0.99)).toBe(LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]);
  });
});
