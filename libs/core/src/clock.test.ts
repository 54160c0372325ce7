import { describe, expect, it } from 'vitest';
import { isoString } from './clock.js';

describe('isoString', () => {
  it('is toISOString, whatever the order of the times', () => {
    const base = Date.UTC(2026, 10, 23, 19, 59, 59, 998);
    const times = [
      base, base, base + 1, base + 2, base + 3, base - 1000, base + 1, 0, -1, -999, -1000, -1001, 1, 9, 10, 99, 100, 999, 1000,
      Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(10000, 0, 1), Date.UTC(-1, 0, 1, 0, 0, 0, 5), -8.64e15, 8.64e15, 8.64e15 - 1,
      1.5, -1.5, 1767225600000.9, -0,
    ];
    for (let i = 0; i < 20_000; i++) times.push(base + Math.floor((Math.random() - 0.5) * 5_000), Math.floor((Math.random() - 0.5) * 2 * 8.64e15));
    for (const t of times) expect(isoString(t)).toBe(new Date(t).toISOString());
  });

  it('is toISOString when two seconds alternate (a record formats now and now + TTL)', () => {
    const now = Date.UTC(2026, 10, 25, 12, 0, 0, 0);
    const ttl = 30 * 86_400_000;
    for (let i = 0; i < 3000; i += 7) {
      for (const t of [now + i, now + i + ttl, now + i + 1, now + ttl + 2 * i]) expect(isoString(t)).toBe(new Date(t).toISOString());
    }
  });

  it('throws where toISOString does', () => {
    for (const t of [NaN, Infinity, -Infinity, 8.64e15 + 1, 8.64e15 + 500, -8.64e15 - 1]) {
      expect(() => new Date(t).toISOString()).toThrow(RangeError);
      expect(() => isoString(t)).toThrow(RangeError);
    }
  });
});
