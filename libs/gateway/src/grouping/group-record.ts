import type { EventGroup, GroupState, GroupSummary, GroupedEvent } from '@sluice/core';

/** Captured from the rule when the group is created; later rule edits do not change a live group. */
export interface GroupSettings {
  group_wait_seconds: number;
  group_interval_seconds: number;
  /** Null: ephemeral (deleted after its single flush). */
  repeat_interval_seconds: number | null;
  max_group_size: number;
}

/** The stored group. Times are epoch ms; the wire view renders them as RFC 3339. */
export interface GroupRecord {
  group_id: string;
  group_key: string;
  namespace: string;
  tenant: string;
  rule: string;
  provider: string;
  action_type: string;
  labels: Record<string, string>;
  events: GroupedEvent[];
  /** Characters of the events' JSON (MAX_GROUP_EVENT_CHARS caps it); absent in records written before it was kept. */
  event_chars?: number;
  /**
   * The action id of the last event `event_chars` counts: a release that does not keep the count
   * (a rolling upgrade) appends without it, and a last event that differs says to measure again.
   */
  event_chars_through?: string;
  state: GroupState;
  notify_at: number;
  last_notified_at: number | null;
  created_at: number;
  updated_at: number;
  settings: GroupSettings;
  /** Bumped whenever notify_at is planned anew: exactly one flush job exists per cycle. */
  cycle: number;
  /** Events received since the last notification (the batch that max_group_size caps). */
  new_events: number;
  /** Re-fires sent without a new event since the last one (persistent groups resolve after QUIET_REPEATS). */
  quiet_repeats: number;
  dropped: number;
}

/*
 * What the record key holds: a live group, or the tombstone a closed group leaves. A tombstone
 * (never a delete) keeps the version growing, so a compare-and-swap planned against the old
 * group can never match whatever group the key holds next.
 */
export type Decoded = { kind: 'live'; group: GroupRecord } | { kind: 'closed'; group_id: string } | { kind: 'absent' };

export function encodeGroup(group: GroupRecord): string {
  return JSON.stringify({ group });
}

export function encodeTombstone(groupId: string, at: number): string {
  return JSON.stringify({ closed: { group_id: groupId, at } });
}

/** Only this module writes these values; the checks catch a foreign or truncated value, not every field. */
function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function isGroupRecord(x: unknown): x is GroupRecord {
  if (!isObject(x) || !isObject(x['settings']) || !isObject(x['labels']) || !Array.isArray(x['events'])) return false;
  const strings = ['group_id', 'group_key', 'namespace', 'tenant', 'rule', 'provider', 'action_type', 'state'];
  const numbers = ['notify_at', 'created_at', 'updated_at', 'cycle', 'new_events', 'quiet_repeats', 'dropped'];
  return strings.every((k) => typeof x[k] === 'string') && numbers.every((k) => typeof x[k] === 'number');
}

/** An unreadable value counts as closed: the next event replaces it with a fresh group. */
export function decodeGroup(raw: string | null | undefined): Decoded {
  if (raw === null || raw === undefined) return { kind: 'absent' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { kind: 'closed', group_id: '' };
  }
  if (isObject(parsed) && isGroupRecord(parsed['group'])) return { kind: 'live', group: parsed['group'] };
  const closed = isObject(parsed) && isObject(parsed['closed']) ? parsed['closed']['group_id'] : undefined;
  return { kind: 'closed', group_id: typeof closed === 'string' ? closed : '' };
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The spec's Event group, plus scope, rule, provider and counters. */
export function groupView(g: GroupRecord): EventGroup {
  return {
    group_id: g.group_id,
    group_key: g.group_key,
    namespace: g.namespace,
    tenant: g.tenant,
    rule: g.rule,
    provider: g.provider,
    action_type: g.action_type,
    labels: g.labels,
    events: g.events,
    event_count: g.events.length,
    new_event_count: g.new_events,
    dropped_event_count: g.dropped,
    state: g.state,
    notify_at: iso(g.notify_at),
    last_notified_at: g.last_notified_at === null ? null : iso(g.last_notified_at),
    created_at: iso(g.created_at),
    updated_at: iso(g.updated_at),
    group_wait_seconds: g.settings.group_wait_seconds,
    group_interval_seconds: g.settings.group_interval_seconds,
    repeat_interval_seconds: g.settings.repeat_interval_seconds,
    max_group_size: g.settings.max_group_size,
  };
}

/** The list entry, plus what the sweeper needs to re-enqueue an overdue flush. */
export interface StoredSummary extends GroupSummary {
  cycle: number;
  due_ms: number;
}

export function summaryOf(g: GroupRecord): StoredSummary {
  return {
    group_id: g.group_id,
    group_key: g.group_key,
    namespace: g.namespace,
    tenant: g.tenant,
    event_count: g.events.length,
    state: g.state,
    notify_at: iso(g.notify_at),
    created_at: iso(g.created_at),
    cycle: g.cycle,
    due_ms: g.notify_at,
  };
}

/** A closed group's summary: kept briefly (it expires) and skipped by readers. */
export const CLOSED_SUMMARY = 'closed';

export function decodeSummary(raw: string): StoredSummary | null {
  if (raw === CLOSED_SUMMARY) return null;
  try {
    const parsed: unknown = JSON.parse(raw);
    return isObject(parsed) && typeof parsed['group_key'] === 'string' && typeof parsed['due_ms'] === 'number' ? (parsed as unknown as StoredSummary) : null;
  } catch {
    return null;
  }
}

export function toListEntry(s: StoredSummary): GroupSummary {
  const { cycle: _cycle, due_ms: _due, ...entry } = s;
  return entry;
}
