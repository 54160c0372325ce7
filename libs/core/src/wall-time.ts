/** The calendar fields of an instant as a wall clock in some time zone shows them. */
export interface WallTime {
  /** Astronomical year: 1 BC is 0, 2 BC is -1 (proleptic Gregorian, as Date). */
  year: number;
  /** 1-12. */
  month: number;
  /** 1-31. */
  day: number;
  /** 0-23. */
  hour: number;
  minute: number;
  /** ISO weekday: 1 = Monday ... 7 = Sunday. */
  weekday: number;
  /** Length of this month: 28-31. */
  daysInMonth: number;
}

/**
 * Constructing a DateTimeFormat costs far more than formatting with one, so keep one per zone.
 * The key is the caller's spelling (zone names are case-insensitive), so the map is cleared when
 * it grows past a bound rather than letting arbitrary spellings pile up.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();
const MAX_FORMATTERS = 512;

/** Throws RangeError for a zone Intl does not know. */
function formatter(zone: string): Intl.DateTimeFormat {
  let fmt = formatters.get(zone);
  if (fmt === undefined) {
    // era: without it a BC year comes back as a positive number. h23: midnight is 00, never 24.
    fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    if (formatters.size >= MAX_FORMATTERS) formatters.clear();
    formatters.set(zone, fmt);
  }
  return fmt;
}

/**
 * Whether `zone` is a time zone name Intl knows (IANA names and their links, case-insensitive).
 * Offsets such as `+01:00` are refused, as on Node 20, although Node 24's Intl accepts them
 * (ECMA-402 offset time zones): the API takes IANA names, and a fixed offset has a name of its
 * own (`Etc/GMT-1`), so the same configuration validates alike on every supported Node.
 */
export function isTimeZone(zone: string): boolean {
  if (!zone || zone.startsWith('+') || zone.startsWith('-')) return false;
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

const DAY_MS = 86_400_000;

/**
 * The wall-clock fields of `ms` (epoch milliseconds) in `zone`. Seconds are dropped, not rounded.
 * Throws RangeError for an unknown zone or an instant outside Date's range.
 */
export function wallTime(zone: string, ms: number): WallTime {
  let year = 0;
  let month = 0;
  let day = 0;
  let hour = 0;
  let minute = 0;
  let bc = false;
  for (const part of formatter(zone).formatToParts(ms)) {
    switch (part.type) {
      case 'year':
        year = Number(part.value);
        break;
      case 'month':
        month = Number(part.value);
        break;
      case 'day':
        day = Number(part.value);
        break;
      case 'hour':
        hour = Number(part.value);
        break;
      case 'minute':
        minute = Number(part.value);
        break;
      case 'era':
        bc = part.value === 'BC';
        break;
    }
  }
  if (bc) year = 1 - year;
  // The Gregorian calendar repeats every 400 years (146097 days, a whole number of weeks), so a
  // year moved into [2000, 2400) has the same weekdays and month lengths, and Date.UTC treats it
  // literally (it maps years 0-99 to 1900-1999).
  const y = year - 400 * Math.floor((year - 2000) / 400);
  const days = Date.UTC(y, month - 1, day) / DAY_MS;
  // Day 0 (1970-01-01) was a Thursday (4); days is positive here, so % is a true modulo.
  const weekday = ((days + 3) % 7) + 1;
  const daysInMonth = (Date.UTC(y, month, 1) - Date.UTC(y, month - 1, 1)) / DAY_MS;
  return { year, month, day, hour, minute, weekday, daysInMonth };
}
