import { cronFieldProblem } from '@sluice/core';
import { CronExpressionParser } from 'cron-parser';
import type { ConsumeOptions, EnqueueOptions, RepeatOptions } from './scheduler.js';

/**
 * Validation and timing shared by both Scheduler backends, so a bad call fails the same way
 * in memory mode as in Redis mode instead of only in production.
 */

const DEFAULT_ATTEMPTS = 5;
export const DEFAULT_BACKOFF_BASE_MS = 1000;
export const DEFAULT_RETENTION_MS = 24 * 60 * 60 * 1000;

/** Kinds are durable queue names; BullMQ forbids ':' in them. */
export function assertKind(kind: string): void {
  if (!kind || kind.includes(':')) throw new Error(`invalid job kind ${JSON.stringify(kind)}: must be non-empty and contain no ':'`);
}

export function resolveEnqueue(kind: string, opts: EnqueueOptions): { delayMs: number; attempts: number } {
  assertKind(kind);
  if (!opts.id) throw new Error('job id must be non-empty');
  const delayMs = opts.delayMs ?? 0;
  if (!Number.isFinite(delayMs) || delayMs < 0) throw new Error(`delayMs must be a finite number >= 0, got ${delayMs}`);
  const attempts = opts.attempts ?? DEFAULT_ATTEMPTS;
  if (!Number.isInteger(attempts) || attempts < 1) throw new Error(`attempts must be an integer >= 1, got ${attempts}`);
  return { delayMs, attempts };
}

export function resolveConcurrency(opts: ConsumeOptions): number {
  const concurrency = opts.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`concurrency must be an integer >= 1, got ${concurrency}`);
  return concurrency;
}

export type RepeatRule = { everyMs: number } | { cron: string; timezone: string };

export function resolveRepeat(kind: string, opts: RepeatOptions): RepeatRule {
  assertKind(kind);
  if (!opts.id) throw new Error('schedule id must be non-empty');
  if ((opts.everyMs === undefined) === (opts.cron === undefined)) throw new Error('repeat needs exactly one of everyMs or cron');
  if (opts.everyMs !== undefined) {
    if (!Number.isInteger(opts.everyMs) || opts.everyMs <= 0) throw new Error(`everyMs must be a positive integer, got ${opts.everyMs}`);
    return { everyMs: opts.everyMs };
  }
  const cron = (opts.cron ?? '').trim();
  // The contract promises 5 fields; a 6th would silently mean seconds to cron-parser and BullMQ.
  if (!cron.startsWith('@') && cron.split(/\s+/).length !== 5) throw new Error(`cron must have 5 fields: ${JSON.stringify(cron)}`);
  const outOfRange = cronFieldProblem(cron);
  if (outOfRange) throw new Error(`invalid cron ${JSON.stringify(cron)}: ${outOfRange}`);
  const rule = { cron, timezone: opts.timezone ?? 'UTC' };
  nextCronTime(rule, Date.now()); // throws on a bad expression or time zone
  return rule;
}

function parseNext(rule: { cron: string; timezone: string }, after: number): number {
  return CronExpressionParser.parse(rule.cron, { tz: rule.timezone, currentDate: new Date(after) })
    .next()
    .getTime();
}

/** The latest cron occurrence at or before `at` (epoch ms), or null where there is none or cron-parser cannot tell. */
export function latestCronTimeAtOrBefore(rule: { cron: string; timezone: string }, at: number): number | null {
  try {
    return CronExpressionParser.parse(rule.cron, { tz: rule.timezone, currentDate: new Date(at + 1) })
      .prev()
      .getTime();
  } catch {
    return null;
  }
}

/** How far past `after` the fallback search looks, at most: any cron expression that can fire does within 28 years. */
const FALLBACK_SEARCH_MS = 30 * 366 * 24 * 60 * 60 * 1000;

/**
 * The first cron occurrence strictly after `after` (epoch ms). cron-parser's forward search gives
 * up ("loop limit exceeded", after about a second) on some searches that cross a 30-minute DST
 * change (Australia/Lord_Howe: `0 2 * * *` from the day before its fall-back), where the
 * occurrence exists and its backward search finds it: then the latest occurrence before a later
 * point (an hour on, doubling: a weekly or monthly schedule's next run may be weeks away) is
 * walked back to the first one after `after`. An expression that never fires still throws.
 */
export function nextCronTime(rule: { cron: string; timezone: string }, after: number): number {
  try {
    return parseNext(rule, after);
  } catch (err) {
    for (let step = 3_600_000; step <= FALLBACK_SEARCH_MS; step *= 2) {
      let found = latestCronTimeAtOrBefore(rule, after + step);
      if (found === null || found <= after) continue;
      for (let earlier = latestCronTimeAtOrBefore(rule, found - 1); earlier !== null && earlier > after; earlier = latestCronTimeAtOrBefore(rule, found - 1)) {
        found = earlier;
      }
      return found;
    }
    throw err;
  }
}

/** Exponential backoff as BullMQ computes it: base * 2^(failedAttempt - 1). */
export function backoffDelay(baseMs: number, failedAttempt: number): number {
  return baseMs * 2 ** (failedAttempt - 1);
}
