import type { RecurringAction } from '@sluice/core';
import { latestAtOrBefore, nextAfter, storedSchedule } from './cron-schedule.js';

/**
 * What one delivery of a recurring action's schedule job does, decided from the record alone.
 * The record's `next_execution` is the occurrence it is waiting for; firing moves it on by a
 * compare-and-swap, so that CAS is the per-occurrence claim: of any number of deliveries of one
 * occurrence (BullMQ delivers at least once, and every worker may hold one), exactly one swaps
 * and dispatches; the others re-read, find `next_execution` in the future, and do nothing.
 */

/** A delivery this early is still taken for its occurrence (timers and host clocks are not exact). */
export const EARLY_TOLERANCE_MS = 500;
/** An occurrence later than this (workers were down) is skipped, not fired: no backlog after downtime. */
export const MISFIRE_GRACE_MS = 60_000;

/** An enabled action whose next execution passed more than the misfire grace ago: no worker ran it. */
export function isPastDue(record: RecurringAction, nowMs: number): boolean {
  return record.enabled && record.next_execution !== null && nowMs - Date.parse(record.next_execution) > MISFIRE_GRACE_MS;
}

export type Plan =
  /** Nothing to do: paused or finished, or this delivery's occurrence was already claimed. */
  | { kind: 'idle'; reason: 'disabled' | 'not-due' }
  /** Swap in `record` and stop: the due occurrence lies past end_date, or is too late to fire. */
  | { kind: 'skip'; reason: 'ended' | 'missed'; record: RecurringAction }
  /** Swap in `record` (the claim), then dispatch the occurrence scheduled for `slot`. */
  | { kind: 'fire'; slot: number; record: RecurringAction };

export function planOccurrence(record: RecurringAction, nowMs: number): Plan {
  if (!record.enabled || record.next_execution === null) return { kind: 'idle', reason: 'disabled' };
  const due = Date.parse(record.next_execution);
  if (due > nowMs + EARLY_TOLERANCE_MS) return { kind: 'idle', reason: 'not-due' };
  const schedule = storedSchedule(record.cron_expr, record.timezone);
  // Late (a slow queue, or the first delivery after downtime): the latest occurrence that is due
  // is the one to fire; any before it are skipped.
  const slot = due > nowMs ? due : Math.max(due, latestAtOrBefore(schedule, nowMs) ?? due);
  const endsAt = record.ends_at === undefined ? undefined : Date.parse(record.ends_at);
  if (endsAt !== undefined && slot > endsAt) return { kind: 'skip', reason: 'ended', record: withNext(record, null) };
  if (nowMs - slot > MISFIRE_GRACE_MS) {
    return { kind: 'skip', reason: 'missed', record: withNext(record, upcoming(record, nowMs)) };
  }
  const fired: RecurringAction = { ...record, execution_count: record.execution_count + 1, last_executed_at: new Date(nowMs).toISOString() };
  return { kind: 'fire', slot, record: withNext(fired, upcoming(fired, Math.max(slot, nowMs))) };
}

/**
 * The first occurrence strictly after `afterMs` that the record's limits still allow; null when
 * max_executions is reached or it would fall after end_date.
 */
export function upcoming(
  record: Pick<RecurringAction, 'cron_expr' | 'timezone' | 'ends_at' | 'max_executions' | 'execution_count'>,
  afterMs: number,
): number | null {
  if (record.max_executions !== undefined && record.execution_count >= record.max_executions) return null;
  const next = nextAfter(storedSchedule(record.cron_expr, record.timezone), afterMs);
  if (record.ends_at !== undefined && next > Date.parse(record.ends_at)) return null;
  return next;
}

/** A record waiting for `next` (or, with none left, finished: disabled). */
export function withNext(record: RecurringAction, next: number | null): RecurringAction {
  return { ...record, next_execution: next === null ? null : new Date(next).toISOString(), enabled: record.enabled && next !== null };
}
