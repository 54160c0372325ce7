import { describe, expect, it } from 'vitest';
import { windowBounds } from './quota-window.js';

const at = (iso: string) => Date.parse(iso);
const bounds = (window: Parameters<typeof windowBounds>[0], iso: string) => {
  const { startMs, endMs } = windowBounds(window, at(iso));
  return [new Date(startMs).toISOString(), new Date(endMs).toISOString()];
};

describe('quota windows (UTC calendar boundaries)', () => {
  it('hourly: the clock hour', () => {
    expect(bounds('hourly', '2026-03-05T14:37:12.345Z')).toEqual(['2026-03-05T14:00:00.000Z', '2026-03-05T15:00:00.000Z']);
    expect(bounds('hourly', '2026-03-05T14:00:00.000Z')).toEqual(['2026-03-05T14:00:00.000Z', '2026-03-05T15:00:00.000Z']);
    expect(bounds('hourly', '2026-12-31T23:59:59.999Z')).toEqual(['2026-12-31T23:00:00.000Z', '2027-01-01T00:00:00.000Z']);
  });

  it('daily: midnight to midnight, across month and year ends', () => {
    expect(bounds('daily', '2026-03-05T00:00:00.000Z')).toEqual(['2026-03-05T00:00:00.000Z', '2026-03-06T00:00:00.000Z']);
    expect(bounds('daily', '2026-04-30T23:59:59.999Z')).toEqual(['2026-04-30T00:00:00.000Z', '2026-05-01T00:00:00.000Z']);
    expect(bounds('daily', '2026-12-31T12:00:00.000Z')).toEqual(['2026-12-31T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
  });

  it('daily: leap days', () => {
    expect(bounds('daily', '2028-02-28T10:00:00.000Z')).toEqual(['2028-02-28T00:00:00.000Z', '2028-02-29T00:00:00.000Z']);
    expect(bounds('daily', '2028-02-29T10:00:00.000Z')).toEqual(['2028-02-29T00:00:00.000Z', '2028-03-01T00:00:00.000Z']);
  });

  it('weekly: ISO weeks from Monday 00:00 UTC', () => {
    // 2026-03-02 is a Monday.
    expect(bounds('weekly', '2026-03-02T00:00:00.000Z')).toEqual(['2026-03-02T00:00:00.000Z', '2026-03-09T00:00:00.000Z']);
    expect(bounds('weekly', '2026-03-05T09:00:00.000Z')).toEqual(['2026-03-02T00:00:00.000Z', '2026-03-09T00:00:00.000Z']);
    // Sunday belongs to the week that started the Monday before.
    expect(bounds('weekly', '2026-03-08T23:59:59.999Z')).toEqual(['2026-03-02T00:00:00.000Z', '2026-03-09T00:00:00.000Z']);
    // A week spanning a year end (2026-12-28 is a Monday) and a leap February.
    expect(bounds('weekly', '2027-01-01T08:00:00.000Z')).toEqual(['2026-12-28T00:00:00.000Z', '2027-01-04T00:00:00.000Z']);
    expect(bounds('weekly', '2028-03-01T08:00:00.000Z')).toEqual(['2028-02-28T00:00:00.000Z', '2028-03-06T00:00:00.000Z']);
  });

  it('monthly: calendar months of every length', () => {
    expect(bounds('monthly', '2026-01-31T23:59:59.999Z')).toEqual(['2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z']);
    expect(bounds('monthly', '2026-02-15T00:00:00.000Z')).toEqual(['2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z']);
    expect(bounds('monthly', '2028-02-29T12:00:00.000Z')).toEqual(['2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z']);
    expect(bounds('monthly', '2026-12-01T00:00:00.000Z')).toEqual(['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
  });

  it('the window always contains now', () => {
    for (let t = at('2027-12-25T00:00:00Z'); t < at('2028-03-10T00:00:00Z'); t += 7 * 3_600_000 + 123_457) {
      for (const w of ['hourly', 'daily', 'weekly', 'monthly'] as const) {
        const { startMs, endMs } = windowBounds(w, t);
        expect(startMs <= t && t < endMs).toBe(true);
      }
    }
  });
});
