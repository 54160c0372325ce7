import type { IndexRangeQuery, ScanOptions, SetOptions, WindowOptions } from './state-store.js';

/*
 * Argument checks shared by both backends, so a bad TTL or limit fails the same way on memory
 * and on Redis (where it would otherwise surface as a protocol error, or not at all).
 */

/** Whole, positive milliseconds; fractions round up so a TTL never ends early. */
export function positiveMs(ms: number, name: string): number {
  if (!Number.isFinite(ms) || ms <= 0) throw new RangeError(`${name} must be a positive number of ms, got ${ms}`);
  return Math.ceil(ms);
}

/** The TTL of a write, or undefined for "no expiry". */
export function ttlOf(opts: SetOptions | undefined): number | undefined {
  return opts?.ttlMs === undefined ? undefined : positiveMs(opts.ttlMs, 'ttlMs');
}

export interface WindowArgs {
  by: number;
  windowMs: number;
  limit: number | undefined;
  windowEndsAtMs: number | undefined;
}

export function windowArgs(opts: WindowOptions): WindowArgs {
  const by = opts.by ?? 1;
  if (!Number.isSafeInteger(by)) throw new RangeError(`by must be an integer, got ${by}`);
  if (opts.limit !== undefined && Number.isNaN(opts.limit)) throw new RangeError('limit must be a number');
  if (opts.windowEndsAtMs !== undefined && !Number.isFinite(opts.windowEndsAtMs)) throw new RangeError('windowEndsAtMs must be a finite number');
  return { by, windowMs: positiveMs(opts.windowMs, 'windowMs'), limit: opts.limit, windowEndsAtMs: opts.windowEndsAtMs };
}

export function checkScore(score: number): number {
  if (Number.isNaN(score)) throw new RangeError('index score must be a number, got NaN');
  return score;
}

/** A positive whole member count for indexAddBounded. */
export function maxMembersArg(max: number): number {
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`maxMembers must be a positive integer, got ${max}`);
  return max;
}

/** Non-negative whole count for indexPopDue. */
export function popLimit(limit: number): number {
  return nonNegativeInteger(limit, 'limit');
}

function nonNegativeInteger(n: number, name: string): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative integer, got ${n}`);
  return n;
}

/** Inclusive score bounds; an absent bound is the matching infinity. */
export function scoreBounds(min: number | undefined, max: number | undefined): { min: number; max: number } {
  return { min: checkScore(min ?? -Infinity), max: checkScore(max ?? Infinity) };
}

export interface RangeArgs {
  min: number;
  max: number;
  rev: boolean;
  offset: number;
  limit: number;
}

export function rangeArgs(query: IndexRangeQuery): RangeArgs {
  return {
    ...scoreBounds(query.min, query.max),
    rev: query.rev ?? false,
    offset: nonNegativeInteger(query.offset ?? 0, 'offset'),
    limit: nonNegativeInteger(query.limit, 'limit'),
  };
}

const DEFAULT_SCAN_COUNT = 100;

export function scanCount(opts: ScanOptions | undefined): number {
  const count = opts?.count ?? DEFAULT_SCAN_COUNT;
  if (!Number.isSafeInteger(count) || count <= 0) throw new RangeError(`scan count must be a positive integer, got ${count}`);
  return count;
}

/** A log's length bound: a positive integer (checked alike on both backends). */
export function logMaxLen(maxLen: number): number {
  if (!Number.isInteger(maxLen) || maxLen < 1) throw new RangeError(`maxLen must be a positive integer, got ${maxLen}`);
  return maxLen;
}
