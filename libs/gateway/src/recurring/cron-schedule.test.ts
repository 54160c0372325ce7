import { SluiceError } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { latestAtOrBefore, nextAfter, parseSchedule, secondsCronAllowed } from './cron-schedule.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

/** The next `n` occurrences after `from`, as UTC instants. */
function series(expr: string, timezone: string, from: string, n: number): string[] {
  const schedule = parseSchedule(expr, timezone, { allowSeconds: false });
  const out: string[] = [];
  let t = at(from);
  for (let i = 0; i < n; i++) {
    t = nextAfter(schedule, t);
    out.push(iso(t));
  }
  return out;
}

function badRequest(fn: () => unknown, message: RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(SluiceError);
  expect((caught as SluiceError).statusCode).toBe(400);
  expect((caught as SluiceError).message).toMatch(message);
}

describe('cron schedules in a named time zone', () => {
  it('keeps 09:00 local in America/New_York across the March DST change (14:00Z → 13:00Z)', () => {
    expect(series('0 9 * * *', 'America/New_York', '2026-03-06T00:00:00Z', 4)).toEqual([
      '2026-03-06T14:00:00.000Z',
      '2026-03-07T14:00:00.000Z',
      '2026-03-08T13:00:00.000Z', // DST began at 02:00 that morning
      '2026-03-09T13:00:00.000Z',
    ]);
  });

  it('keeps 09:00 local in America/New_York across the November change (13:00Z → 14:00Z)', () => {
    expect(series('0 9 * * *', 'America/New_York', '2026-10-31T00:00:00Z', 3)).toEqual([
      '2026-10-31T13:00:00.000Z',
      '2026-11-01T14:00:00.000Z',
      '2026-11-02T14:00:00.000Z',
    ]);
  });

  it('fires a Europe/Berlin 02:30 that does not exist (spring forward) once, right after the gap', () => {
    expect(series('30 2 * * *', 'Europe/Berlin', '2026-03-27T12:00:00Z', 4)).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:30:00.000Z', // 02:30 does not exist: 03:30 CEST
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
      '2026-03-31T00:30:00.000Z',
    ]);
  });

  it('fires a Europe/Berlin 02:30 that exists twice (fall back) once, at its first instance', () => {
    expect(series('30 2 * * *', 'Europe/Berlin', '2026-10-23T12:00:00Z', 3)).toEqual([
      '2026-10-24T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T00:30:00.000Z', // 02:30 CEST; the repeated 02:30 CET (01:30Z) does not fire again
      '2026-10-26T01:30:00.000Z', // 02:30 CET
    ]);
  });

  it('runs an interval through the repeated hour in real time (every 30 minutes, Berlin fall back)', () => {
    expect(series('*/30 * * * *', 'Europe/Berlin', '2026-10-24T23:50:00Z', 6)).toEqual([
      '2026-10-25T00:00:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-25T01:00:00.000Z',
      '2026-10-25T01:30:00.000Z',
      '2026-10-25T02:00:00.000Z',
      '2026-10-25T02:30:00.000Z',
    ]);
  });

  it('finds the latest occurrence at or before an instant', () => {
    const s = parseSchedule('0 9 * * *', 'America/New_York', { allowSeconds: false });
    expect(iso(latestAtOrBefore(s, at('2026-03-10T13:00:00Z')) ?? 0)).toBe('2026-03-10T13:00:00.000Z');
    expect(iso(latestAtOrBefore(s, at('2026-03-10T12:59:59.999Z')) ?? 0)).toBe('2026-03-09T13:00:00.000Z');
    expect(nextAfter(s, at('2026-03-10T13:00:00Z'))).toBe(at('2026-03-11T13:00:00Z'));
  });
});

describe('parseSchedule', () => {
  it('accepts 5 fields, names and macros, and normalizes spacing', () => {
    expect(parseSchedule(' 0  9 * * MON-FRI ', 'UTC', { allowSeconds: false })).toEqual({ expr: '0 9 * * MON-FRI', timezone: 'UTC', seconds: false });
    expect(parseSchedule('@hourly', 'Europe/Berlin', { allowSeconds: false }).seconds).toBe(false);
  });

  it('refuses other field counts, bad values and unknown zones with 400', () => {
    badRequest(() => parseSchedule('0 9 * *', 'UTC', { allowSeconds: false }), /invalid cron expression "0 9 \* \*": expected 5 fields/);
    badRequest(() => parseSchedule('61 9 * * *', 'UTC', { allowSeconds: false }), /invalid cron expression/);
    badRequest(() => parseSchedule('0 0 31 2 *', 'UTC', { allowSeconds: false }), /invalid cron expression/);
    badRequest(() => parseSchedule('not a cron at all', 'UTC', { allowSeconds: false }), /invalid cron expression/);
    badRequest(() => parseSchedule('0 9 * * *', 'Mars/Olympus_Mons', { allowSeconds: false }), /invalid timezone "Mars\/Olympus_Mons"/);
  });

  it('accepts a seconds field only in test mode', () => {
    badRequest(() => parseSchedule('* * * * * *', 'UTC', { allowSeconds: false }), /expected 5 fields/);
    expect(parseSchedule('*/2 * * * * *', 'UTC', { allowSeconds: true })).toEqual({ expr: '*/2 * * * * *', timezone: 'UTC', seconds: true });
    expect(secondsCronAllowed({ SLUICE_TEST_SECONDS_CRON: '1' })).toBe(true);
    expect(secondsCronAllowed({})).toBe(false);
  });
});
