import type { TimeRange } from '@sluice/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { compileSchedule } from './interval-schedule.js';

const at = (iso: string) => Date.parse(iso);

/** Asserts the schedule's answer at each instant (ISO, UTC), reporting the instant on failure. */
function expectActive(ranges: TimeRange[], expected: Record<string, boolean>, location = 'UTC'): void {
  const schedule = compileSchedule({ location, time_ranges: ranges });
  for (const [iso, active] of Object.entries(expected)) expect(schedule.isActive(at(iso)), iso).toBe(active);
  // A fresh schedule per instant: the answers must not depend on the memo or the order of calls.
  for (const [iso, active] of Object.entries(expected)) expect(compileSchedule({ location, time_ranges: ranges }).isActive(at(iso)), iso).toBe(active);
}

describe('compileSchedule: days of the month', () => {
  it('-1 is the last day of February in leap and common years', () => {
    expectActive([{ days_of_month: [{ start: -1, end: -1 }] }], {
      '2024-02-28T12:00:00Z': false,
      '2024-02-29T00:00:00Z': true,
      '2024-02-29T23:59:00Z': true,
      '2024-03-01T00:00:00Z': false,
      '2025-02-27T12:00:00Z': false,
      '2025-02-28T12:00:00Z': true,
      '2025-03-01T12:00:00Z': false,
      '2025-03-31T12:00:00Z': true,
      '2025-04-30T12:00:00Z': true,
      '2025-04-29T12:00:00Z': false,
    });
  });

  it('resolves both ends against the month: the 25th to the last day, the last week', () => {
    expectActive([{ days_of_month: [{ start: 25, end: -1 }] }], {
      '2025-02-24T12:00:00Z': false,
      '2025-02-25T12:00:00Z': true,
      '2025-02-28T12:00:00Z': true,
      '2025-03-24T12:00:00Z': false,
      '2025-03-31T12:00:00Z': true,
    });
    expectActive([{ days_of_month: [{ start: -7, end: -1 }] }], {
      '2024-02-22T12:00:00Z': false,
      '2024-02-23T12:00:00Z': true,
      '2025-02-21T12:00:00Z': false,
      '2025-02-22T12:00:00Z': true,
    });
  });

  it('reads the day in the interval zone', () => {
    // 2024-03-01 03:00 UTC is still 29 February (22:00 EST) in New York.
    expectActive(
      [{ days_of_month: [{ start: -1, end: -1 }] }],
      { '2024-03-01T03:00:00Z': true, '2024-03-01T05:00:00Z': false, '2024-02-29T04:59:00Z': false },
      'America/New_York',
    );
  });
});

describe('compileSchedule: times of day', () => {
  it('24:00 ends the day, exclusive', () => {
    expectActive([{ times: [{ start: '23:00', end: '24:00' }] }], {
      '2025-01-01T22:59:59Z': false,
      '2025-01-01T23:00:00Z': true,
      '2025-01-01T23:59:00Z': true,
      '2025-01-01T23:59:59.999Z': true,
      '2025-01-02T00:00:00Z': false,
    });
  });

  it('the end minute is excluded, the start minute included', () => {
    expectActive([{ times: [{ start: '09:00', end: '17:00' }] }], {
      '2025-01-01T08:59:59Z': false,
      '2025-01-01T09:00:00Z': true,
      '2025-01-01T16:59:59Z': true,
      '2025-01-01T17:00:00Z': false,
    });
  });

  it('works before 1970, where ms are negative', () => {
    expectActive([{ times: [{ start: '23:59', end: '24:00' }] }], { '1969-12-31T23:59:30Z': true, '1969-12-31T23:58:59Z': false });
  });
});

describe('compileSchedule: weekdays', () => {
  it('Sunday is 7', () => {
    // 2025-01-05 is a Sunday.
    expectActive([{ weekdays: [{ start: 7, end: 7 }] }], {
      '2025-01-04T12:00:00Z': false,
      '2025-01-05T00:00:00Z': true,
      '2025-01-05T23:59:00Z': true,
      '2025-01-06T00:00:00Z': false,
      '2025-01-06T12:00:00Z': false,
    });
    expectActive([{ weekdays: [{ start: 1, end: 1 }] }], { '2025-01-05T12:00:00Z': false, '2025-01-06T12:00:00Z': true });
  });
});

describe('compileSchedule: business hours in America/New_York across DST', () => {
  const business: TimeRange[] = [{ weekdays: [{ start: 1, end: 5 }], times: [{ start: '09:00', end: '17:00' }] }];

  it('March change (2025-03-09): 09:00-17:00 local before (EST, UTC-5) and after (EDT, UTC-4)', () => {
    expectActive(
      business,
      {
        // Friday 7 March, EST.
        '2025-03-07T13:59:00Z': false,
        '2025-03-07T14:00:00Z': true,
        '2025-03-07T21:59:00Z': true,
        '2025-03-07T22:00:00Z': false,
        // Saturday.
        '2025-03-08T15:00:00Z': false,
        // Monday 10 March, EDT.
        '2025-03-10T12:59:00Z': false,
        '2025-03-10T13:00:00Z': true,
        '2025-03-10T20:59:00Z': true,
        '2025-03-10T21:00:00Z': false,
      },
      'America/New_York',
    );
  });

  it('November change (2025-11-02): EDT before, EST after', () => {
    expectActive(
      business,
      {
        // Friday 31 October, EDT.
        '2025-10-31T12:59:00Z': false,
        '2025-10-31T13:00:00Z': true,
        '2025-10-31T20:59:00Z': true,
        '2025-10-31T21:00:00Z': false,
        // Sunday 2 November.
        '2025-11-02T15:00:00Z': false,
        // Monday 3 November, EST.
        '2025-11-03T13:59:00Z': false,
        '2025-11-03T14:00:00Z': true,
        '2025-11-03T21:59:00Z': true,
        '2025-11-03T22:00:00Z': false,
      },
      'America/New_York',
    );
  });

  it('a weekday is the local one: Monday 00:30 UTC is Sunday evening in New York', () => {
    expectActive([{ weekdays: [{ start: 7, end: 7 }] }], { '2025-01-06T00:30:00Z': true, '2025-01-06T05:00:00Z': false }, 'America/New_York');
  });
});

describe('compileSchedule: combining', () => {
  it('fields in a range are AND-ed', () => {
    // 2025-01-06 is a Monday.
    expectActive([{ weekdays: [{ start: 1, end: 1 }], times: [{ start: '09:00', end: '10:00' }], months: [{ start: 1, end: 1 }] }], {
      '2025-01-06T09:30:00Z': true,
      '2025-01-06T11:00:00Z': false,
      '2025-01-07T09:30:00Z': false,
      '2025-02-03T09:30:00Z': false,
    });
  });

  it('ranges are OR-ed', () => {
    const ranges: TimeRange[] = [{ weekdays: [{ start: 6, end: 7 }] }, { times: [{ start: '00:00', end: '06:00' }] }];
    expectActive(ranges, {
      '2025-01-04T12:00:00Z': true,
      '2025-01-06T03:00:00Z': true,
      '2025-01-06T12:00:00Z': false,
    });
  });

  it('entries of one field are OR-ed', () => {
    expectActive(
      [
        {
          times: [
            { start: '09:00', end: '10:00' },
            { start: '14:00', end: '15:00' },
          ],
        },
      ],
      { '2025-01-06T09:30:00Z': true, '2025-01-06T12:00:00Z': false, '2025-01-06T14:59:00Z': true, '2025-01-06T15:00:00Z': false },
    );
  });

  it('months and years are inclusive', () => {
    expectActive([{ months: [{ start: 11, end: 12 }], years: [{ start: 2025, end: 2026 }] }], {
      '2025-10-31T23:59:00Z': false,
      '2025-11-01T00:00:00Z': true,
      '2026-12-31T23:59:00Z': true,
      '2027-11-01T00:00:00Z': false,
      '2024-12-01T00:00:00Z': false,
    });
  });

  it('an empty range, or one with only empty lists, is always active', () => {
    const instants = ['1970-01-01T00:00:00Z', '2024-02-29T12:34:00Z', '2025-11-02T06:30:00Z', '2099-12-31T23:59:59Z'];
    for (const ranges of [[{}], [{ times: [], weekdays: [] }], [{ weekdays: [{ start: 1, end: 1 }] }, {}]]) {
      expectActive(ranges, Object.fromEntries(instants.map((iso) => [iso, true])));
    }
  });

  it('no ranges is never active', () => {
    expect(compileSchedule({ location: 'UTC', time_ranges: [] }).isActive(at('2025-01-06T09:30:00Z'))).toBe(false);
  });

  it('refuses an unknown zone up front', () => {
    expect(() => compileSchedule({ location: 'Mars/Olympus', time_ranges: [{}] })).toThrow(RangeError);
  });
});

describe('compileSchedule: memo', () => {
  afterEach(() => vi.restoreAllMocks());

  it('does not carry an answer across a minute boundary, in either direction', () => {
    const schedule = compileSchedule({ location: 'UTC', time_ranges: [{ times: [{ start: '09:00', end: '09:01' }] }] });
    expect(schedule.isActive(at('2025-01-06T08:59:59.999Z'))).toBe(false);
    expect(schedule.isActive(at('2025-01-06T09:00:00.000Z'))).toBe(true);
    expect(schedule.isActive(at('2025-01-06T09:00:59.999Z'))).toBe(true);
    expect(schedule.isActive(at('2025-01-06T09:01:00.000Z'))).toBe(false);
    expect(schedule.isActive(at('2025-01-06T09:00:30.000Z'))).toBe(true);
    expect(schedule.isActive(at('2025-01-06T08:59:30.000Z'))).toBe(false);
    // Same minute of another day.
    expect(schedule.isActive(at('2025-01-07T09:00:30.000Z'))).toBe(true);
  });

  it('computes the wall time once per minute', () => {
    const schedule = compileSchedule({ location: 'America/New_York', time_ranges: [{ weekdays: [{ start: 1, end: 5 }] }] });
    const spy = vi.spyOn(Intl.DateTimeFormat.prototype, 'formatToParts');
    const start = at('2025-01-06T15:00:00Z');
    for (let ms = start; ms < start + 60_000; ms += 7) schedule.isActive(ms);
    expect(spy).toHaveBeenCalledTimes(1);
    schedule.isActive(start + 60_000);
    expect(spy).toHaveBeenCalledTimes(2);
  });
});
