import { z } from 'zod';

/*
 * Upper bounds of the durations and counts that rules, quotas, retention policies, recurring
 * actions, silences and chains accept (issue 18: an unbounded `group_wait_seconds` became a
 * notify_at past the largest Date, and every matching dispatch answered 500). Each feature's doc
 * lists the bounds it uses; request schemas carry them as `maximum`, so /openapi.json shows them.
 *
 * Every bound keeps `now + bound * 1000` far inside the range of a Date (±8.64e15 ms) and of an
 * exact integer of milliseconds (2^53), so seconds-to-milliseconds arithmetic never overflows.
 */

const DAY_SECONDS = 86_400;

/** Waits, windows and TTLs of rule actions, and a chain's timeout: 30 days. */
export const MAX_WAIT_SECONDS = 30 * DAY_SECONDS;
/** The delay before one chain step: 7 days (a run's whole timeout is at most MAX_WAIT_SECONDS). */
export const MAX_STEP_DELAY_SECONDS = 7 * DAY_SECONDS;
/** A silence's window (duration_seconds, ends_at − starts_at, an extension): one year. */
export const MAX_SILENCE_SECONDS = 365 * DAY_SECONDS;
/** A state machine's timeout: one year. */
export const MAX_STATE_TIMEOUT_SECONDS = 365 * DAY_SECONDS;
/** Retention TTLs (audit, state, events): ten years, past the usual record-keeping rules (six or seven years); beyond, use compliance_hold. */
export const MAX_RETENTION_SECONDS = 10 * 365 * DAY_SECONDS;
/** Actions counted in one window (quota max_actions, throttle max_count). */
export const MAX_ACTIONS_PER_WINDOW = 1_000_000_000;
/** Events one group holds (the record is rewritten on every append and sent whole). */
export const MAX_GROUP_SIZE = 1000;
/** Executions of one recurring action (once a minute for 19 years). */
export const MAX_RECURRING_EXECUTIONS = 10_000_000;
/** Steps of one chain definition. */
export const MAX_CHAIN_STEPS = 64;

/** `30 days`: a span of seconds in the largest whole unit that divides it. */
export function spanOf(seconds: number): string {
  const units: [number, string][] = [
    [365 * DAY_SECONDS, 'year'],
    [DAY_SECONDS, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
  ];
  const [size, name] = units.find(([size]) => seconds >= size && seconds % size === 0) ?? [1, 'second'];
  const n = seconds / size;
  return `${n} ${name}${n === 1 ? '' : 's'}`;
}

function boundedInt(min: number, max: number, shownMax: string) {
  return z.number().int().min(min, `must be >= ${min}`).max(max, `must be <= ${shownMax}`);
}

/** A whole number of seconds in [min, max]; the message beyond names the limit (`must be <= 2592000 (30 days)`). */
export function durationSeconds(max: number, min = 1) {
  return boundedInt(min, max, `${max} (${spanOf(max)})`);
}

/** A whole number of minutes in [min, max] (`must be <= 525600 (1 year)`). */
export function durationMinutes(max: number, min = 1) {
  return boundedInt(min, max, `${max} (${spanOf(max * 60)})`);
}

/** A count (events, executions, actions per window, steps) in [min, max]. */
export function boundedCount(max: number, min = 1) {
  return boundedInt(min, max, String(max));
}
