import type { AnalyticsInterval } from '@sluice/core';

/** UTC bucket arithmetic on epoch milliseconds. */
export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

function floorTo(ms: number, unit: number): number {
  return ms - (((ms % unit) + unit) % unit);
}

export function floorHour(ms: number): number {
  return floorTo(ms, HOUR_MS);
}

export function ceilHour(ms: number): number {
  const floor = floorHour(ms);
  return floor === ms ? ms : floor + HOUR_MS;
}

export function floorDay(ms: number): number {
  return floorTo(ms, DAY_MS);
}

/** Monday 00:00 UTC of the ISO week holding `ms` (1970-01-01 was a Thursday, weekday 3 counted from Monday). */
function floorWeek(ms: number): number {
  const day = Math.floor(ms / DAY_MS);
  const weekday = (((day + 3) % 7) + 7) % 7;
  return (day - weekday) * DAY_MS;
}

function floorMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** Start of the interval bucket holding `ms`. */
export function bucketStart(interval: AnalyticsInterval, ms: number): number {
  switch (interval) {
    case 'hourly':
      return floorHour(ms);
    case 'daily':
      return floorDay(ms);
    case 'weekly':
      return floorWeek(ms);
    case 'monthly':
      return floorMonth(ms);
  }
}

/** Start of the bucket after the one starting at `start`. */
export function nextBucket(interval: AnalyticsInterval, start: number): number {
  switch (interval) {
    case 'hourly':
      return start + HOUR_MS;
    case 'daily':
      return start + DAY_MS;
    case 'weekly':
      return start + 7 * DAY_MS;
    case 'monthly': {
      const d = new Date(start);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    }
  }
}

/** How many buckets overlap [startMs, endMs); stops counting past `cap` (the answer is then cap + 1). */
export function countBuckets(interval: AnalyticsInterval, startMs: number, endMs: number, cap: number): number {
  let n = 0;
  for (let b = bucketStart(interval, startMs); b < endMs && n <= cap; b = nextBucket(interval, b)) n++;
  return n;
}
