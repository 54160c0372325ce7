import { describe, expect, it } from 'vitest';
import { isTimeZone, wallTime } from './wall-time.js';

const at = (iso: string) => Date.parse(iso);

describe('isTimeZone', () => {
  it('accepts IANA names and refuses the rest', () => {
    for (const zone of ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Etc/GMT+5']) expect(isTimeZone(zone), zone).toBe(true);
    for (const zone of ['', 'Mars/Olympus', 'Europe/Pariss', ' UTC', '+01:00', 'not a zone']) expect(isTimeZone(zone), zone).toBe(false);
  });
});

describe('wallTime', () => {
  it('reads the fields in the zone', () => {
    expect(wallTime('UTC', at('2024-02-29T23:59:59.999Z'))).toEqual({ year: 2024, month: 2, day: 29, hour: 23, minute: 59, weekday: 4, daysInMonth: 29 });
    // 00:30 UTC on a Monday is still Sunday evening in New York (EST, UTC-5).
    expect(wallTime('America/New_York', at('2025-01-06T00:30:00Z'))).toEqual({
      year: 2025,
      month: 1,
      day: 5,
      hour: 19,
      minute: 30,
      weekday: 7,
      daysInMonth: 31,
    });
    // India is UTC+5:30: the half hour carries into the date.
    expect(wallTime('Asia/Kolkata', at('2025-12-31T18:30:00Z'))).toMatchObject({ year: 2026, month: 1, day: 1, hour: 0, minute: 0, weekday: 4 });
  });

  it('writes midnight as hour 0, never 24', () => {
    expect(wallTime('Europe/Paris', at('2025-06-14T22:00:00Z'))).toMatchObject({ day: 15, hour: 0, minute: 0 });
  });

  it('follows DST changes', () => {
    // 2025-03-09 02:00 EST jumps to 03:00 EDT.
    expect(wallTime('America/New_York', at('2025-03-09T06:59:00Z'))).toMatchObject({ hour: 1, minute: 59 });
    expect(wallTime('America/New_York', at('2025-03-09T07:00:00Z'))).toMatchObject({ hour: 3, minute: 0 });
    // 2025-11-02 02:00 EDT falls back to 01:00 EST: 01:30 happens twice.
    expect(wallTime('America/New_York', at('2025-11-02T05:30:00Z'))).toMatchObject({ hour: 1, minute: 30 });
    expect(wallTime('America/New_York', at('2025-11-02T06:30:00Z'))).toMatchObject({ hour: 1, minute: 30 });
  });

  it('agrees with Date on weekday and month length, day by day across leap and common years', () => {
    for (let t = at('2023-12-25T12:00:00Z'); t < at('2028-03-05T00:00:00Z'); t += 86_400_000) {
      const date = new Date(t);
      const w = wallTime('UTC', t);
      expect(w.weekday, date.toISOString()).toBe(date.getUTCDay() === 0 ? 7 : date.getUTCDay());
      expect(w.daysInMonth, date.toISOString()).toBe(new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate());
      expect([w.year, w.month, w.day]).toEqual([date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()]);
    }
  });

  it('handles century rules and years Date.UTC would remap', () => {
    expect(wallTime('UTC', at('1900-02-15T00:00:00Z')).daysInMonth).toBe(28);
    expect(wallTime('UTC', at('2000-02-15T00:00:00Z')).daysInMonth).toBe(29);
    expect(wallTime('UTC', at('2100-02-15T00:00:00Z')).daysInMonth).toBe(28);
    // 0050-03-01: Date.UTC(50, ...) would mean 1950.
    const y50 = new Date(0);
    y50.setUTCFullYear(50, 2, 1);
    expect(wallTime('UTC', y50.getTime())).toMatchObject({ year: 50, month: 3, day: 1, weekday: y50.getUTCDay() === 0 ? 7 : y50.getUTCDay() });
    // 5 BC (astronomical -4) must not read as year 5.
    const bc = new Date(0);
    bc.setUTCFullYear(-4, 0, 1);
    expect(wallTime('UTC', bc.getTime())).toMatchObject({ year: -4, month: 1, day: 1 });
  });

  it('throws for an unknown zone', () => {
    expect(() => wallTime('Mars/Olympus', 0)).toThrow(RangeError);
  });
});
