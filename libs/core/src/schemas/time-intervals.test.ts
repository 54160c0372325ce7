import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  DayOfMonthRange,
  MonthRange,
  TimeIntervalCreateInput,
  TimeIntervalScopeQuery,
  TimeIntervalUpdateInput,
  TimeOfDayRange,
  TimeRange,
  WeekdayRange,
  YearRange,
} from './time-intervals.js';

const valid = {
  name: 'business-hours',
  namespace: 'ops',
  tenant: 'acme',
  time_ranges: [{ times: [{ start: '09:00', end: '17:00' }], weekdays: [{ start: 1, end: 5 }] }],
};

/** Parses `input` expecting a failure, and returns the issue messages joined (for toMatch). */
function rejects(schema: z.ZodType, input: unknown): string {
  const result = schema.safeParse(input);
  expect(result.success, JSON.stringify(input)).toBe(false);
  return result.error ? result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') : '';
}

describe('TimeOfDayRange', () => {
  it('accepts HH:MM with 24:00 as an end', () => {
    expect(TimeOfDayRange.parse({ start: '00:00', end: '24:00' })).toEqual({ start: '00:00', end: '24:00' });
    expect(TimeOfDayRange.parse({ start: '23:59', end: '24:00' })).toEqual({ start: '23:59', end: '24:00' });
    expect(TimeOfDayRange.parse({ start: '09:00', end: '09:01' })).toEqual({ start: '09:00', end: '09:01' });
  });

  it('refuses malformed times', () => {
    expect(rejects(TimeOfDayRange, { start: '25:00', end: '26:00' })).toMatch(/start: must be HH:MM/);
    expect(rejects(TimeOfDayRange, { start: '09:00', end: '25:00' })).toMatch(/end: must be HH:MM/);
    expect(rejects(TimeOfDayRange, { start: '09:60', end: '10:00' })).toMatch(/start/);
    expect(rejects(TimeOfDayRange, { start: '9:00', end: '10:00' })).toMatch(/start/);
    expect(rejects(TimeOfDayRange, { start: '09:00', end: '24:01' })).toMatch(/end/);
    expect(rejects(TimeOfDayRange, { start: '09:00' })).toMatch(/end/);
  });

  it('refuses 24:00 as a start', () => {
    expect(rejects(TimeOfDayRange, { start: '24:00', end: '24:00' })).toMatch(/start: must be HH:MM with HH 00-23/);
  });

  it('refuses start at or after end', () => {
    expect(rejects(TimeOfDayRange, { start: '17:00', end: '09:00' })).toMatch(/end: start must be before end/);
    expect(rejects(TimeOfDayRange, { start: '09:00', end: '09:00' })).toMatch(/start must be before end/);
  });
});

describe('WeekdayRange, MonthRange, YearRange', () => {
  it('accepts inclusive ranges, Sunday as 7', () => {
    expect(WeekdayRange.parse({ start: 7, end: 7 })).toEqual({ start: 7, end: 7 });
    expect(WeekdayRange.parse({ start: 1, end: 5 })).toEqual({ start: 1, end: 5 });
    expect(MonthRange.parse({ start: 12, end: 12 })).toEqual({ start: 12, end: 12 });
    expect(YearRange.parse({ start: 2025, end: 2030 })).toEqual({ start: 2025, end: 2030 });
  });

  it('refuses values out of bounds, fractions and reversed ranges', () => {
    rejects(WeekdayRange, { start: 1, end: 8 });
    rejects(WeekdayRange, { start: 0, end: 5 });
    rejects(WeekdayRange, { start: 1.5, end: 5 });
    expect(rejects(WeekdayRange, { start: 5, end: 1 })).toMatch(/start must not be after end/);
    rejects(MonthRange, { start: 1, end: 13 });
    rejects(MonthRange, { start: 0, end: 1 });
    expect(rejects(MonthRange, { start: 6, end: 3 })).toMatch(/start must not be after end/);
    rejects(YearRange, { start: 0, end: 2025 });
    rejects(YearRange, { start: 2025, end: 10000 });
    rejects(YearRange, { start: 2026, end: 2025 });
    rejects(WeekdayRange, { start: '1', end: 5 });
  });
});

describe('DayOfMonthRange', () => {
  it('accepts positive, negative and positive-to-negative ranges', () => {
    for (const r of [
      { start: 1, end: 31 },
      { start: -1, end: -1 },
      { start: -7, end: -1 },
      { start: 25, end: -1 },
      { start: 31, end: -31 },
    ]) {
      expect(DayOfMonthRange.parse(r)).toEqual(r);
    }
  });

  it('refuses day 0, out of bounds, reversed, and negative-to-positive', () => {
    expect(rejects(DayOfMonthRange, { start: 0, end: 5 })).toMatch(/start: day 0 does not exist/);
    expect(rejects(DayOfMonthRange, { start: 1, end: 0 })).toMatch(/end: day 0/);
    rejects(DayOfMonthRange, { start: 1, end: 32 });
    rejects(DayOfMonthRange, { start: -32, end: -1 });
    expect(rejects(DayOfMonthRange, { start: 20, end: 10 })).toMatch(/start must not be after end/);
    expect(rejects(DayOfMonthRange, { start: -1, end: -7 })).toMatch(/start must not be after end/);
    expect(rejects(DayOfMonthRange, { start: -7, end: 5 })).toMatch(/negative start needs a negative end/);
  });
});

describe('TimeRange', () => {
  it('accepts the empty range and every field', () => {
    expect(TimeRange.parse({})).toEqual({});
    const full = {
      times: [{ start: '09:00', end: '17:00' }],
      weekdays: [{ start: 1, end: 5 }],
      days_of_month: [{ start: 1, end: -1 }],
      months: [{ start: 1, end: 12 }],
      years: [{ start: 2025, end: 2025 }],
    };
    expect(TimeRange.parse(full)).toEqual(full);
  });

  it('refuses unknown keys and more than 64 entries', () => {
    expect(rejects(TimeRange, { weekday: [{ start: 1, end: 5 }] })).toMatch(/weekday/);
    rejects(TimeRange, { weekdays: Array.from({ length: 65 }, () => ({ start: 1, end: 1 })) });
    rejects(TimeRange, { times: [{ start: '09:00', end: '17:00', tz: 'UTC' }] });
  });
});

describe('TimeIntervalCreateInput', () => {
  it('defaults location to UTC', () => {
    expect(TimeIntervalCreateInput.parse(valid)).toEqual({ ...valid, location: 'UTC' });
    expect(TimeIntervalCreateInput.parse({ ...valid, location: 'America/New_York', description: 'office' })).toMatchObject({
      location: 'America/New_York',
      description: 'office',
    });
  });

  it('refuses an unknown zone, naming it', () => {
    expect(rejects(TimeIntervalCreateInput, { ...valid, location: 'Mars/Olympus' })).toMatch(/location: unknown time zone "Mars\/Olympus"/);
    expect(rejects(TimeIntervalCreateInput, { ...valid, location: '' })).toMatch(/unknown time zone ""/);
  });

  it('refuses unknown keys, empty or missing time_ranges, bad names', () => {
    expect(rejects(TimeIntervalCreateInput, { ...valid, timezone: 'UTC' })).toMatch(/timezone/);
    expect(rejects(TimeIntervalCreateInput, { ...valid, time_ranges: [] })).toMatch(/time_ranges/);
    expect(rejects(TimeIntervalCreateInput, { ...valid, time_ranges: undefined })).toMatch(/time_ranges/);
    rejects(TimeIntervalCreateInput, { ...valid, time_ranges: Array.from({ length: 65 }, () => ({})) });
    rejects(TimeIntervalCreateInput, { ...valid, name: '' });
    rejects(TimeIntervalCreateInput, { ...valid, tenant: 'a\nb' });
    rejects(TimeIntervalCreateInput, { ...valid, namespace: undefined });
    rejects(TimeIntervalCreateInput, { ...valid, description: 'x'.repeat(1025) });
  });

  it('reports a nested range error with its path', () => {
    const bad = { ...valid, time_ranges: [{}, { times: [{ start: '09:00', end: '25:00' }] }] };
    expect(rejects(TimeIntervalCreateInput, bad)).toMatch(/time_ranges\.1\.times\.0\.end/);
  });
});

describe('TimeIntervalUpdateInput', () => {
  it('accepts any one field, null removing the description', () => {
    expect(TimeIntervalUpdateInput.parse({ description: null })).toEqual({ description: null });
    expect(TimeIntervalUpdateInput.parse({ location: 'Europe/Paris' })).toEqual({ location: 'Europe/Paris' });
    expect(TimeIntervalUpdateInput.parse({ time_ranges: [{}] })).toEqual({ time_ranges: [{}] });
  });

  it('refuses an empty update, unknown keys, a bad zone, and a scope change', () => {
    expect(rejects(TimeIntervalUpdateInput, {})).toMatch(/nothing to update/);
    rejects(TimeIntervalUpdateInput, { location: 'Nowhere/Land' });
    rejects(TimeIntervalUpdateInput, { name: 'renamed' });
    rejects(TimeIntervalUpdateInput, { time_ranges: [] });
  });
});

describe('TimeIntervalScopeQuery', () => {
  it('needs both namespace and tenant', () => {
    expect(TimeIntervalScopeQuery.parse({ namespace: 'ops', tenant: 'acme' })).toEqual({ namespace: 'ops', tenant: 'acme' });
    rejects(TimeIntervalScopeQuery, { namespace: 'ops' });
    rejects(TimeIntervalScopeQuery, { tenant: 'acme', namespace: '' });
  });
});
