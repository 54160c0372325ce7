import { z } from 'zod';
import { isTimeZone } from '../wall-time.js';
import { boundedName } from './names.js';

/** A namespace, tenant or interval name: non-empty, bounded, free of control characters. */
const Name = boundedName();

const MAX_RANGES = 64;
const Description = z.string().max(1024);

const StartTime = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be HH:MM with HH 00-23')
  .describe('first minute of the range, HH:MM local time');
const EndTime = z
  .string()
  .regex(/^(([01]\d|2[0-3]):[0-5]\d|24:00)$/, 'must be HH:MM with HH 00-23, or 24:00')
  .describe('end of the range, exclusive, HH:MM local time; 24:00 is the end of the day');

/** Minutes of a day, end exclusive: 09:00-17:00 covers 09:00 through 16:59. Ranges do not wrap past midnight. */
export const TimeOfDayRange = z
  .strictObject({ start: StartTime, end: EndTime })
  // Both sides are fixed-width HH:MM, so string order is time order.
  .refine((r) => r.start < r.end, { message: 'start must be before end (end is exclusive; use 24:00 for the end of the day)', path: ['end'] });
export type TimeOfDayRange = z.infer<typeof TimeOfDayRange>;

/** An inclusive range of integers in [min, max] with start <= end. */
function orderedRange(min: number, max: number, what: string) {
  const bound = z.number().int().min(min).max(max);
  return z
    .strictObject({ start: bound.describe(`first ${what}, inclusive`), end: bound.describe(`last ${what}, inclusive`) })
    .refine((r) => r.start <= r.end, { message: 'start must not be after end', path: ['end'] });
}

/** ISO weekdays, inclusive: 1 = Monday ... 7 = Sunday. Ranges do not wrap past Sunday: list two ranges instead. */
export const WeekdayRange = orderedRange(1, 7, 'weekday (1 = Monday ... 7 = Sunday)');
export type WeekdayRange = z.infer<typeof WeekdayRange>;

/** Months, inclusive: 1 = January ... 12 = December. */
export const MonthRange = orderedRange(1, 12, 'month (1-12)');
export type MonthRange = z.infer<typeof MonthRange>;

/** Calendar years, inclusive. */
export const YearRange = orderedRange(1, 9999, 'year');
export type YearRange = z.infer<typeof YearRange>;

const Day = z
  .number()
  .int()
  .min(-31)
  .max(31)
  .refine((d) => d !== 0, 'day 0 does not exist: use 1 for the first day, -1 for the last');

/**
 * Days of the month, inclusive; a negative day counts from the month's end (-1 is the last day).
 * Both ends are resolved against the month's length, so {start: 25, end: -1} is the 25th to the
 * last day. A negative start with a positive end would depend on the month's length both ways, and is refused.
 */
export const DayOfMonthRange = z
  .strictObject({
    start: Day.describe('first day, inclusive: 1-31, or -31 to -1 counting from the end of the month'),
    end: Day.describe('last day, inclusive: 1-31, or -31 to -1 counting from the end of the month'),
  })
  .refine((r) => !(r.start < 0 && r.end > 0), { message: 'a negative start needs a negative end', path: ['end'] })
  .refine((r) => Math.sign(r.start) !== Math.sign(r.end) || r.start <= r.end, { message: 'start must not be after end', path: ['end'] });
export type DayOfMonthRange = z.infer<typeof DayOfMonthRange>;

function rangeList<T extends z.ZodType>(range: T, what: string) {
  return z.array(range).max(MAX_RANGES).optional().describe(`${what}: matches when any entry does; absent or empty matches any`);
}

/**
 * One window: it matches when every field it gives matches. `{}` matches at all times (as in
 * Alertmanager's time intervals).
 */
export const TimeRange = z.strictObject({
  times: rangeList(TimeOfDayRange, 'times of day'),
  weekdays: rangeList(WeekdayRange, 'weekdays'),
  days_of_month: rangeList(DayOfMonthRange, 'days of the month'),
  months: rangeList(MonthRange, 'months'),
  years: rangeList(YearRange, 'years'),
});
export type TimeRange = z.infer<typeof TimeRange>;

const TimeRanges = z.array(TimeRange).min(1).max(MAX_RANGES).describe('the interval is active when any range matches');

const Location = z
  .string()
  .max(128)
  .refine(isTimeZone, { error: (issue) => `unknown time zone ${JSON.stringify(issue.input)}: expected an IANA zone name such as Europe/Paris` })
  .describe('IANA time zone the ranges are read in');

/** POST /v1/time-intervals. Unknown keys are refused so a misspelt field is an error, not a wider window. */
export const TimeIntervalCreateInput = z.strictObject({
  name: Name.describe('interval name, unique within namespace and tenant; rules refer to it'),
  namespace: Name,
  tenant: Name,
  location: Location.default('UTC'),
  time_ranges: TimeRanges,
  description: Description.optional(),
});
export type TimeIntervalCreateInput = z.infer<typeof TimeIntervalCreateInput>;

/** PUT /v1/time-intervals/{name}: partial; name and scope never change. */
export const TimeIntervalUpdateInput = z
  .strictObject({
    time_ranges: TimeRanges.optional().describe('replaces all ranges'),
    location: Location.optional(),
    description: Description.nullable().optional().describe('null removes the description'),
  })
  .refine((u) => u.time_ranges !== undefined || u.location !== undefined || u.description !== undefined, {
    message: 'nothing to update: give time_ranges, location or description',
  });
export type TimeIntervalUpdateInput = z.infer<typeof TimeIntervalUpdateInput>;

export const TimeInterval = z.object({
  name: z.string(),
  namespace: z.string(),
  tenant: z.string(),
  location: z.string(),
  time_ranges: z.array(TimeRange),
  description: z.string().optional(),
  created_by: z.string().describe('caller that created the interval'),
  created_at: z.string(),
  updated_at: z.string(),
  matches_now: z.boolean().describe('whether the interval is active at the time of the response'),
});
export type TimeInterval = z.infer<typeof TimeInterval>;

/** GET, PUT and DELETE /v1/time-intervals/{name} name the scope in the query. */
export const TimeIntervalScopeQuery = z.object({ namespace: Name, tenant: Name });
export type TimeIntervalScopeQuery = z.infer<typeof TimeIntervalScopeQuery>;

export const TimeIntervalListQuery = z.object({
  namespace: z.string().optional().describe('only intervals in this namespace'),
  tenant: z.string().optional().describe('only intervals of this tenant'),
});
export type TimeIntervalListQuery = z.infer<typeof TimeIntervalListQuery>;

export const TimeIntervalList = z.object({
  time_intervals: z.array(TimeInterval),
  count: z.number().int(),
});
export type TimeIntervalList = z.infer<typeof TimeIntervalList>;

export const TimeIntervalNameParams = z.object({ name: z.string().min(1).max(256) });
export type TimeIntervalNameParams = z.infer<typeof TimeIntervalNameParams>;
