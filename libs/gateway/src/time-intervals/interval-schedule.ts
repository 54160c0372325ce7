import { isTimeZone, type TimeRange, type WallTime, wallTime } from '@sluice/core';

export interface IntervalSchedule {
  /** Whether the interval is active at `ms` (epoch milliseconds). */
  isActive(ms: number): boolean;
}

/** [start, end] of one field; for times of day, minutes with end exclusive. */
type Span = readonly [start: number, end: number];

/** A range's fields; null = not given, which matches anything. */
interface CompiledRange {
  times: Span[] | null;
  weekdays: Span[] | null;
  days: Span[] | null;
  months: Span[] | null;
  years: Span[] | null;
}

const MINUTE_MS = 60_000;

/**
 * Compiles an interval for repeated evaluation. Ranges are OR-ed; within a range the given fields
 * are AND-ed; within a field the entries are OR-ed. Everything is read in the wall time of
 * `location`, so a 09:00-17:00 window follows the local clock across DST changes.
 * Throws RangeError when `location` is not a known zone.
 */
export function compileSchedule(def: { location: string; time_ranges: readonly TimeRange[] }): IntervalSchedule {
  const zone = def.location;
  if (!isTimeZone(zone)) throw new RangeError(`unknown time zone ${JSON.stringify(zone)}`);
  const ranges = def.time_ranges.map(compileRange);
  // A range with no fields matches at all times, which makes the whole interval constant.
  if (ranges.some(isUnbounded)) return { isActive: () => true };
  if (ranges.length === 0) return { isActive: () => false };

  // Every field has minute resolution, and zone offsets in use are whole minutes, so the answer
  // is constant within a UTC minute: memoize the last one for the dispatch hot path.
  let lastMinute = Number.NaN;
  let lastActive = false;
  return {
    isActive(ms: number): boolean {
      const minute = Math.floor(ms / MINUTE_MS);
      if (minute === lastMinute) return lastActive;
      // Evaluate at the start of the minute so the memoized answer holds for all of it.
      const wall = wallTime(zone, minute * MINUTE_MS);
      let active = false;
      for (const range of ranges) {
        if (matches(range, wall)) {
          active = true;
          break;
        }
      }
      lastMinute = minute;
      lastActive = active;
      return active;
    },
  };
}

function compileRange(range: TimeRange): CompiledRange {
  return {
    times: spans(range.times, (t) => [minuteOfDay(t.start), minuteOfDay(t.end)]),
    weekdays: spans(range.weekdays, (r) => [r.start, r.end]),
    days: spans(range.days_of_month, (r) => [r.start, r.end]),
    months: spans(range.months, (r) => [r.start, r.end]),
    years: spans(range.years, (r) => [r.start, r.end]),
  };
}

/** An absent or empty list constrains nothing (as Alertmanager, and as the reference omits empty lists). */
function spans<T>(list: readonly T[] | undefined, toSpan: (entry: T) => Span): Span[] | null {
  return list && list.length > 0 ? list.map(toSpan) : null;
}

function isUnbounded(r: CompiledRange): boolean {
  return !r.times && !r.weekdays && !r.days && !r.months && !r.years;
}

/** 'HH:MM' (validated by the schema) to minutes since midnight; '24:00' is 1440. */
function minuteOfDay(hhmm: string): number {
  return Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
}

function matches(r: CompiledRange, w: WallTime): boolean {
  if (r.times && !inSpans(r.times, w.hour * 60 + w.minute, true)) return false;
  if (r.weekdays && !inSpans(r.weekdays, w.weekday, false)) return false;
  if (r.days && !inDays(r.days, w.day, w.daysInMonth)) return false;
  if (r.months && !inSpans(r.months, w.month, false)) return false;
  if (r.years && !inSpans(r.years, w.year, false)) return false;
  return true;
}

function inSpans(list: Span[], value: number, endExclusive: boolean): boolean {
  for (const [start, end] of list) {
    if (value >= start && (endExclusive ? value < end : value <= end)) return true;
  }
  return false;
}

/** Negative days count from the end of this month (-1 = last day); both ends are resolved, then compared. */
function inDays(list: Span[], day: number, daysInMonth: number): boolean {
  for (const [start, end] of list) {
    const from = start < 0 ? daysInMonth + 1 + start : start;
    const to = end < 0 ? daysInMonth + 1 + end : end;
    if (day >= from && day <= to) return true;
  }
  return false;
}
