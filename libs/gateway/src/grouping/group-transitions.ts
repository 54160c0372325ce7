import type { GroupedEvent } from '@sluice/core';
import type { FlushJobData } from './group-keys.js';
import type { Decoded, GroupRecord, GroupSettings } from './group-record.js';

/*
 * The group state table as pure functions: (stored value, input, now) → the value to write.
 * The service runs each inside a compare-and-swap loop, so every row happens atomically.
 *
 *   (none)    + event            → pending, notify_at = now + group_wait
 *   pending   + event            → pending, event appended (oldest dropped at capacity: max_group_size
 *                                  events or MAX_GROUP_EVENT_CHARS of them), notify_at kept;
 *                                  the batch reaching max_group_size moves notify_at to now (early flush)
 *   pending   + flush due        → notified (persistent, next flush = now + repeat_interval) or deleted (ephemeral)
 *   notified  + event            → pending, notify_at = max(now, last_notified_at + group_interval)
 *   notified  + repeat due       → notified again (a re-fire), or resolved once idle
 *   resolved  + event            → a new group (new group_id)
 *   pending | notified + DELETE  → flushed and deleted
 */

/** Re-fires without a new event before a persistent group counts as idle and resolves. */
export const QUIET_REPEATS = 1;

/** Everything about a new group that comes from the event's rule and action. */
export interface GroupOrigin {
  groupKey: string;
  labels: Record<string, string>;
  namespace: string;
  tenant: string;
  rule: string;
  provider: string;
  action_type: string;
  settings: GroupSettings;
}

export interface AppendPlan {
  next: GroupRecord;
  /** True when notify_at (and so the cycle) changed: a flush job for the new cycle is due. */
  replanned: boolean;
  created: boolean;
  /** Events dropped by this append (FIFO at capacity). */
  dropped: number;
  /** The action was already in the group (a client retry): nothing changes. */
  duplicate: boolean;
}

const seconds = (s: number): number => s * 1000;

/**
 * Characters of JSON a group's events may hold together: the record is read and rewritten whole
 * on every append and sent whole when it flushes, so a tenant's large payloads (a 1 MB one per
 * event) made each append cost more than the one before. Past it the oldest events are dropped,
 * as at max_group_size; the newest always stays.
 */
export const MAX_GROUP_EVENT_CHARS = 2 * 1024 * 1024;

const sizeOf = (event: GroupedEvent): number => JSON.stringify(event).length;

/** Appends one event, or starts a new group when there is none to append to. `newGroupId` is used only then. */
export function planAppend(current: Decoded, event: GroupedEvent, origin: GroupOrigin, newGroupId: string, now: number): AppendPlan {
  if (current.kind !== 'live' || current.group.state === 'resolved') {
    const { settings } = origin;
    const atCapacity = settings.max_group_size <= 1;
    const next: GroupRecord = {
      group_id: newGroupId,
      group_key: origin.groupKey,
      namespace: origin.namespace,
      tenant: origin.tenant,
      rule: origin.rule,
      provider: origin.provider,
      action_type: origin.action_type,
      labels: origin.labels,
      events: [event],
      event_chars: sizeOf(event),
      event_chars_through: event.action_id,
      state: 'pending',
      notify_at: atCapacity ? now : now + seconds(settings.group_wait_seconds),
      last_notified_at: null,
      created_at: now,
      updated_at: now,
      settings,
      cycle: 1,
      new_events: 1,
      quiet_repeats: 0,
      dropped: 0,
    };
    return { next, replanned: true, created: true, dropped: 0, duplicate: false };
  }
  const g = current.group;
  if (g.events.some((e) => e.action_id === event.action_id)) return { next: g, replanned: false, created: false, dropped: 0, duplicate: true };
  const max = g.settings.max_group_size;
  const all = [...g.events, event];
  let dropped = Math.max(0, all.length - max);
  // Records from before event_chars, or appended to by a release that does not keep it, are measured again.
  const counted = g.event_chars !== undefined && g.event_chars_through === g.events.at(-1)?.action_id;
  let chars = (counted ? (g.event_chars as number) : g.events.reduce((n, e) => n + sizeOf(e), 0)) + sizeOf(event);
  for (let i = 0; i < dropped; i++) chars -= sizeOf(all[i] as GroupedEvent);
  for (; chars > MAX_GROUP_EVENT_CHARS && dropped < all.length - 1; dropped++) chars -= sizeOf(all[dropped] as GroupedEvent);
  const newEvents = g.new_events + 1;
  let notifyAt = g.notify_at;
  if (g.state === 'notified') {
    // Re-batch: not before group_interval after the last notification, and never later than the planned re-fire.
    notifyAt = Math.min(g.notify_at, Math.max(now, (g.last_notified_at ?? now) + seconds(g.settings.group_interval_seconds)));
  }
  if (newEvents >= max) notifyAt = Math.min(notifyAt, now);
  const replanned = notifyAt !== g.notify_at;
  const next: GroupRecord = {
    ...g,
    events: all.slice(dropped),
    event_chars: chars,
    event_chars_through: event.action_id,
    state: 'pending',
    notify_at: notifyAt,
    updated_at: now,
    cycle: replanned ? g.cycle + 1 : g.cycle,
    new_events: newEvents,
    quiet_repeats: 0,
    dropped: g.dropped + dropped,
  };
  return { next, replanned, created: false, dropped, duplicate: false };
}

export type FlushReason = 'group_wait' | 'group_interval' | 'max_group_size' | 'repeat_interval' | 'deleted';

/** The next cycle's flush job, with when it is due. */
export type NextFlush = FlushJobData & { notify_at: number };

export type FlushPlan =
  | { kind: 'skip'; why: 'gone' | 'replaced' | 'superseded' | 'resolved' }
  /** Send `snapshot`; write `next` (null: the group is deleted, leaving a tombstone). */
  | { kind: 'notify'; snapshot: GroupRecord; next: GroupRecord | null; reason: FlushReason; nextFlush: NextFlush | null }
  /** Idle: close without a notification. */
  | { kind: 'resolve'; next: GroupRecord };

function nextFlushOf(g: GroupRecord): NextFlush {
  return { namespace: g.namespace, tenant: g.tenant, group_key: g.group_key, group_id: g.group_id, cycle: g.cycle, notify_at: g.notify_at };
}

/** What the flush job of (group_id, cycle) does to the stored group: only the current cycle of the same group flushes. */
export function planFlush(current: Decoded, job: Pick<FlushJobData, 'group_id' | 'cycle'>, now: number): FlushPlan {
  if (current.kind !== 'live') return { kind: 'skip', why: 'gone' };
  const g = current.group;
  if (g.group_id !== job.group_id) return { kind: 'skip', why: 'replaced' };
  if (g.cycle !== job.cycle) return { kind: 'skip', why: 'superseded' };
  if (g.state === 'resolved') return { kind: 'skip', why: 'resolved' };
  const repeat = g.settings.repeat_interval_seconds;
  const flushed: GroupRecord = { ...g, state: 'notified', last_notified_at: now, updated_at: now };
  if (g.state === 'pending') {
    const reason: FlushReason = g.new_events >= g.settings.max_group_size ? 'max_group_size' : g.last_notified_at === null ? 'group_wait' : 'group_interval';
    if (repeat === null) return { kind: 'notify', snapshot: flushed, next: null, reason, nextFlush: null };
    const next: GroupRecord = { ...flushed, cycle: g.cycle + 1, notify_at: now + seconds(repeat), new_events: 0, quiet_repeats: 0 };
    return { kind: 'notify', snapshot: flushed, next, reason, nextFlush: nextFlushOf(next) };
  }
  // notified: the repeat interval passed with no new event (one would have made it pending).
  if (repeat === null || g.quiet_repeats >= QUIET_REPEATS) {
    return { kind: 'resolve', next: { ...g, state: 'resolved', updated_at: now, cycle: g.cycle + 1 } };
  }
  const next: GroupRecord = { ...flushed, cycle: g.cycle + 1, notify_at: now + seconds(repeat), quiet_repeats: g.quiet_repeats + 1 };
  return { kind: 'notify', snapshot: flushed, next, reason: 'repeat_interval', nextFlush: nextFlushOf(next) };
}

export type ClosePlan = { kind: 'missing' } | { kind: 'resolved' } | { kind: 'notify'; snapshot: GroupRecord; job: FlushJobData };

/** DELETE: flush what the group holds now and delete it, whatever its state and notify_at. */
export function planClose(current: Decoded, now: number): ClosePlan {
  if (current.kind !== 'live') return { kind: 'missing' };
  const g = current.group;
  if (g.state === 'resolved') return { kind: 'resolved' };
  // The claim takes over the current cycle: its scheduled job then finds the group gone.
  const job: FlushJobData = { namespace: g.namespace, tenant: g.tenant, group_key: g.group_key, group_id: g.group_id, cycle: g.cycle };
  return { kind: 'notify', snapshot: { ...g, state: 'resolved', last_notified_at: now, updated_at: now }, job };
}
