import type { AnalyticsInterval } from '@sluice/core';
import type { Granularity } from './rollup-keys.js';
import { DAY_MS, HOUR_MS, bucketStart, ceilHour, floorDay } from './time-buckets.js';

/** One rollup bucket to read, and the output bucket it adds to. */
export interface Segment {
  granularity: Granularity;
  startMs: number;
  bucketMs: number;
}

export interface PlanInput {
  interval: AnalyticsInterval;
  /** Hour-aligned, end exclusive. */
  startMs: number;
  endMs: number;
  nowMs: number;
  hourRetentionMs: number;
  dayRetentionMs: number;
}

/**
 * Which rollups answer a range: hourly ones for hourly queries; otherwise daily ones for whole
 * UTC days and hourly ones for the hours of a partly covered first or last day (so the range is
 * honoured to the hour). When those hours have expired, the whole day stands in for them. Days
 * past the retention and more than a day ahead of now hold nothing, so they are not read: the
 * number of segments stays bounded whatever the range.
 */
export function planSegments(p: PlanInput): Segment[] {
  const start = Math.max(p.startMs, floorDay(p.nowMs - p.dayRetentionMs) - DAY_MS);
  const end = Math.min(p.endMs, ceilHour(p.nowMs) + DAY_MS);
  const hourLive = (h: number) => h + HOUR_MS + p.hourRetentionMs > p.nowMs;
  const segments: Segment[] = [];
  const add = (granularity: Granularity, startMs: number) => segments.push({ granularity, startMs, bucketMs: bucketStart(p.interval, startMs) });

  if (p.interval === 'hourly') {
    for (let h = start; h < end; h += HOUR_MS) if (hourLive(h)) add('hour', h);
    return segments;
  }
  for (let day = floorDay(start); day < end; day += DAY_MS) {
    const from = Math.max(day, start);
    const to = Math.min(day + DAY_MS, end);
    if (from === day && to === day + DAY_MS) add('day', day);
    else if (hourLive(from)) for (let h = from; h < to; h += HOUR_MS) add('hour', h);
    else add('day', day);
  }
  return segments;
}
