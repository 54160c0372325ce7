import { cronFieldProblem, errors, isTimeZone } from '@sluice/core';
import { latestCronTimeAtOrBefore, nextCronTime } from '@sluice/state';
import { CronExpressionParser } from 'cron-parser';

/**
 * A recurring action's schedule: a cron expression read in an IANA time zone. cron-parser does
 * the calendar work (and so DST: a local time that does not exist that day fires the gap's length
 * later, 02:30 as 03:30; one that exists twice fires once, at its first instance), and BullMQ's
 * job scheduler is given the same next-time function (nextCronTime), so the occurrences we claim
 * are the ones it fires.
 */
export interface CronSchedule {
  expr: string;
  timezone: string;
  /** A 6-field expression with a seconds field; accepted only in test mode (see SECONDS_CRON_ENV). */
  seconds: boolean;
}

/**
 * Test mode: with `SLUICE_TEST_SECONDS_CRON=1` in the environment, a 6-field expression (seconds
 * first) is accepted, so tests can watch several occurrences in a few seconds. Never set it in
 * production: it is not a config key on purpose.
 */
const SECONDS_CRON_ENV = 'SLUICE_TEST_SECONDS_CRON';

export function secondsCronAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[SECONDS_CRON_ENV] === '1';
}

/** Validates expression and zone; throws 400 naming what is wrong. */
export function parseSchedule(expr: string, timezone: string, opts: { allowSeconds: boolean }): CronSchedule {
  const text = expr.trim().replace(/\s+/g, ' ');
  const fields = text.startsWith('@') ? 5 : text.split(' ').length;
  const seconds = fields === 6 && opts.allowSeconds;
  if (fields !== 5 && !seconds) {
    throw errors.badRequest(`invalid cron expression "${expr}": expected 5 fields (minute hour day-of-month month day-of-week), got ${fields}`);
  }
  const outOfRange = cronFieldProblem(text);
  if (outOfRange) throw errors.badRequest(`invalid cron expression "${expr}": ${outOfRange}`);
  try {
    CronExpressionParser.parse(text, { tz: 'UTC' }).next();
  } catch (err) {
    throw errors.badRequest(`invalid cron expression "${expr}": ${(err as Error).message}`);
  }
  const zone = timezone.trim();
  if (!isTimeZone(zone)) throw errors.badRequest(`invalid timezone "${timezone}": not an IANA time zone name`);
  const schedule = { expr: text, timezone: zone, seconds };
  try {
    nextAfter(schedule, Date.now());
  } catch {
    throw errors.badRequest(`invalid timezone "${timezone}": not usable for cron evaluation`);
  }
  return schedule;
}

/** A schedule read back from a stored record (validated when it was written). */
export function storedSchedule(expr: string, timezone: string): CronSchedule {
  return { expr, timezone, seconds: !expr.startsWith('@') && expr.split(' ').length === 6 };
}

/** The first occurrence strictly after `afterMs`, as the schedulers compute it (both backends). */
export function nextAfter(schedule: CronSchedule, afterMs: number): number {
  return nextCronTime({ cron: schedule.expr, timezone: schedule.timezone }, afterMs);
}

/** The last occurrence at or before `atMs`; null when there is none. */
export function latestAtOrBefore(schedule: CronSchedule, atMs: number): number | null {
  return latestCronTimeAtOrBefore({ cron: schedule.expr, timezone: schedule.timezone }, atMs);
}
