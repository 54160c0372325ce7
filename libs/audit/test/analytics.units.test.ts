import { describe, expect, it } from 'vitest';
import { LATENCY_BOUNDS_MS, binOf, percentile } from '../src/analytics/histogram.js';
import { planSegments } from '../src/analytics/read-plan.js';
import { MemberDecoder, encodeMember } from '../src/analytics/rollup-keys.js';
import { DAY_MS, HOUR_MS, bucketStart, countBuckets, nextBucket } from '../src/analytics/time-buckets.js';
import { boundOf } from './analytics.dataset.js';

const at = (iso: string) => Date.parse(iso);

describe('latency histogram', () => {
  it('has increasing bounds from 0.25 ms to 16.8e6 ms, each < 1.2x the one before', () => {
    expect(LATENCY_BOUNDS_MS[0]).toBe(0.25);
    expect(LATENCY_BOUNDS_MS.at(-1)).toBe(16_800_000);
    for (let i = 1; i < LATENCY_BOUNDS_MS.length; i++) {
      const ratio = (LATENCY_BOUNDS_MS[i] ?? 0) / (LATENCY_BOUNDS_MS[i - 1] ?? 1);
      expect(ratio).toBeGreaterThan(1.18);
      expect(ratio).toBeLessThan(1.2);
    }
  });

  it('bins like a linear scan, on and around every bound', () => {
    const values = [-1, 0, 1e9, ...LATENCY_BOUNDS_MS.flatMap((b) => [b, b * 0.999, b * 1.001])];
    for (const v of values) expect(LATENCY_BOUNDS_MS[binOf(v)], `${v}`).toBe(boundOf(v));
  });

  it('reports a percentile at or above the exact nearest-rank value and less than 1.2x above it', () => {
    let seed = 1;
    const rand = () => {
      seed = (seed * 16807) % 2147483647;
      return (seed - 1) / 2147483646;
    };
    for (let round = 0; round < 50; round++) {
      const values = Array.from({ length: 1 + Math.floor(rand() * 500) }, () => 0.3 + rand() * 10 ** (rand() * 6));
      const bins = new Map<number, number>();
      for (const v of values) bins.set(binOf(v), (bins.get(binOf(v)) ?? 0) + 1);
      const sorted = [...values].sort((a, b) => a - b);
      for (const p of [50, 95, 99]) {
        const exact = sorted[Math.max(1, Math.ceil((p * values.length) / 100)) - 1] ?? 0;
        const reported = percentile(bins, values.length, p) ?? 0;
        expect(reported).toBeGreaterThanOrEqual(exact);
        expect(reported).toBeLessThan(exact * 1.2);
      }
    }
    expect(percentile(new Map(), 0, 50)).toBeNull();
  });
});

describe('UTC buckets', () => {
  it('aligns weeks to Monday and months to the 1st, across year ends', () => {
    expect(bucketStart('weekly', at('2026-03-01T23:59:59Z'))).toBe(at('2026-02-23T00:00:00Z')); // a Sunday
    expect(bucketStart('weekly', at('2026-03-02T00:00:00Z'))).toBe(at('2026-03-02T00:00:00Z'));
    expect(bucketStart('weekly', at('1969-12-31T12:00:00Z'))).toBe(at('1969-12-29T00:00:00Z'));
    expect(bucketStart('monthly', at('2026-12-31T23:00:00Z'))).toBe(at('2026-12-01T00:00:00Z'));
    expect(nextBucket('monthly', at('2026-12-01T00:00:00Z'))).toBe(at('2027-01-01T00:00:00Z'));
    expect(bucketStart('hourly', at('2026-03-02T10:59:59.999Z'))).toBe(at('2026-03-02T10:00:00Z'));
  });

  it('counts the buckets a range overlaps, stopping past the cap', () => {
    expect(countBuckets('daily', at('2026-03-01T05:00:00Z'), at('2026-03-03T01:00:00Z'), 100)).toBe(3);
    expect(countBuckets('monthly', at('2026-01-31T00:00:00Z'), at('2026-03-01T00:00:00Z'), 100)).toBe(2);
    expect(countBuckets('hourly', 0, 1e6 * HOUR_MS, 10)).toBe(11);
  });
});

describe('read plan', () => {
  const base = { nowMs: at('2026-03-10T00:00:00Z'), hourRetentionMs: 400 * DAY_MS, dayRetentionMs: 400 * DAY_MS };

  it('reads whole days from daily rollups and the partial first and last days by the hour', () => {
    const segments = planSegments({ ...base, interval: 'weekly', startMs: at('2026-03-01T05:00:00Z'), endMs: at('2026-03-03T13:00:00Z') });
    expect(segments.filter((s) => s.granularity === 'hour')).toHaveLength(19 + 13);
    expect(segments.filter((s) => s.granularity === 'day').map((s) => new Date(s.startMs).toISOString())).toEqual(['2026-03-02T00:00:00.000Z']);
    // Sunday's hours go to the week of Feb 23, the rest to the week of Mar 2.
    expect(new Set(segments.map((s) => new Date(s.bucketMs).toISOString()))).toEqual(new Set(['2026-02-23T00:00:00.000Z', '2026-03-02T00:00:00.000Z']));
  });

  it('skips what retention has removed and what lies more than a day ahead', () => {
    const old = planSegments({ ...base, interval: 'daily', startMs: at('2020-01-01T00:00:00Z'), endMs: at('2030-01-01T00:00:00Z') });
    expect(old.length).toBeLessThanOrEqual(403);
    const hourly = planSegments({
      ...base,
      hourRetentionMs: DAY_MS,
      interval: 'hourly',
      startMs: at('2026-03-01T00:00:00Z'),
      endMs: at('2026-03-10T00:00:00Z'),
    });
    expect(hourly).toHaveLength(24);
  });
});

describe('index members', () => {
  it('round-trip any names, and skip foreign members', () => {
    const decoder = new MemberDecoder();
    const tuple = { namespace: 'a,b', tenant: 't]"', provider: '[p', action_type: 'x:y', outcome: 'failed' };
    expect(decoder.decode(encodeMember(tuple, 37))).toMatchObject({ ref: { tuple }, bin: 37 });
    for (const bad of ['', 'x', '[1,2]', '["a","b","c","d",5,1]', '["a","b","c","d","e","f"]']) expect(decoder.decode(bad), bad).toBeNull();
  });
});
