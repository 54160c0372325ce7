import type { GroupedEvent } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import type { Decoded, GroupRecord, GroupSettings } from './group-record.js';
import { MAX_GROUP_EVENT_CHARS, QUIET_REPEATS, planAppend, planClose, planFlush, type GroupOrigin } from './group-transitions.js';

const T0 = Date.UTC(2026, 0, 1);
const S = 1000;

function origin(settings: Partial<GroupSettings> = {}): GroupOrigin {
  return {
    groupKey: 'k',
    labels: { 'payload.cluster': 'c1' },
    namespace: 'ns',
    tenant: 't',
    rule: 'r',
    provider: 'hook',
    action_type: 'alert',
    settings: { group_wait_seconds: 30, group_interval_seconds: 300, repeat_interval_seconds: null, max_group_size: 100, ...settings },
  };
}

let n = 0;
const event = (id = `a${++n}`): GroupedEvent => ({ action_id: id, fingerprint: null, status: null, payload: { n }, received_at: new Date(T0).toISOString() });
const live = (group: GroupRecord): Decoded => ({ kind: 'live', group });
const absent: Decoded = { kind: 'absent' };

/** A group built through the table itself: created at T0, then `more` events appended at T0. */
function pending(settings: Partial<GroupSettings> = {}, more = 0): GroupRecord {
  let g = planAppend(absent, event(), origin(settings), 'g1', T0).next;
  for (let i = 0; i < more; i++) g = planAppend(live(g), event(), origin(settings), 'unused', T0).next;
  return g;
}

describe('group state table', () => {
  it('(none) + event → pending, notify_at = first event + group_wait', () => {
    const plan = planAppend(absent, event('first'), origin(), 'g1', T0);
    expect(plan).toMatchObject({ created: true, replanned: true, duplicate: false });
    expect(plan.next).toMatchObject({ group_id: 'g1', state: 'pending', cycle: 1, notify_at: T0 + 30 * S, last_notified_at: null, new_events: 1 });
    expect(plan.next.events.map((e) => e.action_id)).toEqual(['first']);
  });

  it('a closed (deleted) or resolved group is replaced by a new one on the next event', () => {
    expect(planAppend({ kind: 'closed', group_id: 'old' }, event(), origin(), 'g2', T0).next).toMatchObject({ group_id: 'g2', cycle: 1 });
    const resolved = { ...pending(), state: 'resolved' as const, cycle: 7 };
    expect(planAppend(live(resolved), event(), origin(), 'g3', T0 + S).next).toMatchObject({
      group_id: 'g3',
      cycle: 1,
      state: 'pending',
      notify_at: T0 + 31 * S,
    });
  });

  it('pending + event → appended; notify_at and cycle never move', () => {
    const g = pending();
    const plan = planAppend(live(g), event(), origin(), 'unused', T0 + 29 * S);
    expect(plan).toMatchObject({ created: false, replanned: false, dropped: 0 });
    expect(plan.next).toMatchObject({ group_id: 'g1', state: 'pending', notify_at: g.notify_at, cycle: 1, new_events: 2 });
    expect(plan.next.events).toHaveLength(2);
  });

  it('an action already in the group (a client retry) changes nothing', () => {
    const g = pending();
    const plan = planAppend(live(g), { ...event(), action_id: g.events[0]!.action_id }, origin(), 'unused', T0 + S);
    expect(plan).toMatchObject({ duplicate: true, next: g });
  });

  it('pending reaching max_group_size → notify_at = now in a new cycle (early flush)', () => {
    const g = pending({ max_group_size: 3 }, 1);
    const plan = planAppend(live(g), event(), origin(), 'unused', T0 + 5 * S);
    expect(plan).toMatchObject({ replanned: true });
    expect(plan.next).toMatchObject({ notify_at: T0 + 5 * S, cycle: 2, new_events: 3 });
  });

  it('a group created at max_group_size 1 is due at once', () => {
    expect(planAppend(absent, event(), origin({ max_group_size: 1 }), 'g', T0).next.notify_at).toBe(T0);
  });

  it('at capacity the oldest events are dropped (FIFO)', () => {
    const g = pending({ max_group_size: 3 }, 2);
    const plan = planAppend(live(g), event('newest'), origin(), 'unused', T0 + S);
    expect(plan.dropped).toBe(1);
    expect(plan.next.events.map((e) => e.action_id)).toEqual([g.events[1]!.action_id, g.events[2]!.action_id, 'newest']);
    expect(plan.next.dropped).toBe(1);
  });

  it('past MAX_GROUP_EVENT_CHARS of events the oldest are dropped too, the newest always kept', () => {
    const big = (id: string): GroupedEvent => ({ ...event(id), payload: { blob: 'x'.repeat(MAX_GROUP_EVENT_CHARS / 3) } });
    let g = planAppend(absent, big('b1'), origin(), 'g1', T0).next;
    g = planAppend(live(g), big('b2'), origin(), 'unused', T0).next;
    expect(g.events.map((e) => e.action_id)).toEqual(['b1', 'b2']);
    const plan = planAppend(live(g), big('b3'), origin(), 'unused', T0);
    expect(plan.dropped).toBe(1);
    expect(plan.next.events.map((e) => e.action_id)).toEqual(['b2', 'b3']);
    expect(plan.next.event_chars).toBe(JSON.stringify(plan.next.events[0]).length + JSON.stringify(plan.next.events[1]).length);
    // One event larger than the cap on its own stays (the group's only news), and pushes out the rest.
    const huge = planAppend(live(plan.next), { ...event('huge'), payload: { blob: 'x'.repeat(MAX_GROUP_EVENT_CHARS) } }, origin(), 'unused', T0);
    expect(huge.next.events.map((e) => e.action_id)).toEqual(['huge']);
    expect(huge.next.dropped).toBe(3);
  });

  it('a record stored before event_chars was kept is measured on its next append', () => {
    const g = pending({}, 2);
    const { event_chars: _, ...older } = g;
    const plan = planAppend(live(older), event('next'), origin(), 'unused', T0);
    expect(plan.next.event_chars).toBe(plan.next.events.reduce((n, e) => n + JSON.stringify(e).length, 0));
  });

  it('a record an earlier release appended to (its count left behind) is measured again on its next append', () => {
    const big = (id: string): GroupedEvent => ({ ...event(id), payload: { blob: 'x'.repeat(MAX_GROUP_EVENT_CHARS / 3) } });
    const g = planAppend(absent, big('b1'), origin(), 'g1', T0).next;
    // What an earlier release writes: the events grow, event_chars (and the rest) copied as they were.
    const older = { ...g, events: [...g.events, big('b2'), big('b3')] };
    const plan = planAppend(live(older), big('b4'), origin(), 'unused', T0);
    expect(plan.next.events.map((e) => e.action_id)).toEqual(['b3', 'b4']);
    expect(plan.next.event_chars).toBe(plan.next.events.reduce((n, e) => n + JSON.stringify(e).length, 0));
  });

  it('pending + flush due (ephemeral) → notified snapshot, then deleted (no next flush)', () => {
    const g = pending({}, 2);
    const plan = planFlush(live(g), { group_id: 'g1', cycle: 1 }, T0 + 30 * S);
    expect(plan).toMatchObject({ kind: 'notify', next: null, nextFlush: null, reason: 'group_wait' });
    if (plan.kind !== 'notify') throw new Error('expected notify');
    expect(plan.snapshot).toMatchObject({ state: 'notified', last_notified_at: T0 + 30 * S });
    expect(plan.snapshot.events).toHaveLength(3);
  });

  it('pending + flush due (persistent) → notified, next flush a repeat interval later, in a new cycle', () => {
    const g = pending({ repeat_interval_seconds: 600 });
    const plan = planFlush(live(g), { group_id: 'g1', cycle: 1 }, T0 + 30 * S);
    if (plan.kind !== 'notify' || !plan.next) throw new Error('expected a persistent notify');
    expect(plan.next).toMatchObject({ state: 'notified', cycle: 2, notify_at: T0 + 630 * S, new_events: 0, last_notified_at: T0 + 30 * S });
    expect(plan.nextFlush).toMatchObject({ group_id: 'g1', cycle: 2, notify_at: T0 + 630 * S });
  });

  it('names the reason: group_wait, max_group_size, group_interval', () => {
    const full = pending({ max_group_size: 2 }, 1);
    expect(planFlush(live(full), { group_id: 'g1', cycle: full.cycle }, T0)).toMatchObject({ reason: 'max_group_size' });
    const notified = { ...pending({ repeat_interval_seconds: 600 }), state: 'notified' as const, last_notified_at: T0, notify_at: T0 + 600 * S, new_events: 0 };
    const rebatched = planAppend(live(notified), event(), origin(), 'unused', T0 + 10 * S).next;
    expect(planFlush(live(rebatched), { group_id: 'g1', cycle: rebatched.cycle }, T0 + 300 * S)).toMatchObject({ reason: 'group_interval' });
  });

  it('notified + event → pending again, due group_interval after the last notification', () => {
    const notified = {
      ...pending({ repeat_interval_seconds: 600 }),
      state: 'notified' as const,
      last_notified_at: T0,
      notify_at: T0 + 600 * S,
      cycle: 2,
      new_events: 0,
    };
    const plan = planAppend(live(notified), event(), origin(), 'unused', T0 + 10 * S);
    expect(plan).toMatchObject({ replanned: true });
    expect(plan.next).toMatchObject({ state: 'pending', notify_at: T0 + 300 * S, cycle: 3, new_events: 1 });
    // Later than group_interval: due at once.
    expect(planAppend(live(notified), event(), origin(), 'unused', T0 + 400 * S).next.notify_at).toBe(T0 + 400 * S);
  });

  it('notified + event never moves the flush past the planned re-fire', () => {
    const notified = {
      ...pending({ repeat_interval_seconds: 60, group_interval_seconds: 300 }),
      state: 'notified' as const,
      last_notified_at: T0,
      notify_at: T0 + 60 * S,
      cycle: 2,
      new_events: 0,
    };
    const plan = planAppend(live(notified), event(), origin(), 'unused', T0 + 10 * S);
    expect(plan).toMatchObject({ replanned: false });
    expect(plan.next).toMatchObject({ state: 'pending', notify_at: T0 + 60 * S, cycle: 2 });
  });

  it('notified + repeat due with no new event → re-fired, then resolved once idle', () => {
    let g: GroupRecord = {
      ...pending({ repeat_interval_seconds: 600 }),
      state: 'notified',
      last_notified_at: T0,
      notify_at: T0 + 600 * S,
      cycle: 2,
      new_events: 0,
    };
    for (let i = 0; i < QUIET_REPEATS; i++) {
      const plan = planFlush(live(g), { group_id: 'g1', cycle: g.cycle }, g.notify_at);
      if (plan.kind !== 'notify' || !plan.next) throw new Error('expected a re-fire');
      expect(plan.reason).toBe('repeat_interval');
      expect(plan.snapshot.events).toHaveLength(1);
      g = plan.next;
    }
    const last = planFlush(live(g), { group_id: 'g1', cycle: g.cycle }, g.notify_at);
    expect(last).toMatchObject({ kind: 'resolve', next: { state: 'resolved', cycle: g.cycle + 1 } });
  });

  it('a flush job of another cycle, another group or a gone group does nothing', () => {
    const g = pending({ max_group_size: 2 }, 1); // early flush moved it to cycle 2
    expect(planFlush(live(g), { group_id: 'g1', cycle: 1 }, T0)).toEqual({ kind: 'skip', why: 'superseded' });
    expect(planFlush(live(g), { group_id: 'other', cycle: 2 }, T0)).toEqual({ kind: 'skip', why: 'replaced' });
    expect(planFlush({ kind: 'closed', group_id: 'g1' }, { group_id: 'g1', cycle: 2 }, T0)).toEqual({ kind: 'skip', why: 'gone' });
    expect(planFlush(live({ ...g, state: 'resolved' }), { group_id: 'g1', cycle: 2 }, T0)).toEqual({ kind: 'skip', why: 'resolved' });
  });

  it('DELETE: pending or notified → flushed and deleted; resolved and missing are refused', () => {
    const g = pending({}, 1);
    expect(planClose(live(g), T0 + S)).toMatchObject({
      kind: 'notify',
      job: { group_id: 'g1', cycle: 1 },
      snapshot: { state: 'resolved', last_notified_at: T0 + S },
    });
    expect(planClose(live({ ...g, state: 'notified' }), T0)).toMatchObject({ kind: 'notify' });
    expect(planClose(live({ ...g, state: 'resolved' }), T0)).toEqual({ kind: 'resolved' });
    expect(planClose(absent, T0)).toEqual({ kind: 'missing' });
  });
});
