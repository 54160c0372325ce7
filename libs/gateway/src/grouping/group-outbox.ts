import type { Action, EventGroup } from '@sluice/core';
import type { FlushJobData } from './group-keys.js';
import type { FlushReason, NextFlush } from './group-transitions.js';

/**
 * The notification a claimed flush owes. The claim writes it in the same atomic step that moves
 * the group on, so "claimed" and "owes a notification" can never disagree; delivery reads it,
 * calls the provider and marks it sent. Retries of the flush only ever deliver this, never
 * claim again.
 */
export interface Outbox {
  flush_id: string;
  job: FlushJobData;
  reason: FlushReason;
  /** The group as notified (state, events, last_notified_at as of the claim). */
  group: EventGroup;
  /** The flush the claim planned next (persistent groups); re-enqueued by every delivery attempt. */
  next: NextFlush | null;
  claimed_at: number;
  sent_at: number | null;
  /** Set when delivery gave up (not retryable, or out of attempts). */
  failed: string | null;
}

export function decodeOutbox(raw: string | null): Outbox | null {
  if (raw === null) return null;
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === 'object' && parsed !== null && 'flush_id' in parsed && 'group' in parsed ? (parsed as Outbox) : null;
  } catch {
    return null;
  }
}

/**
 * The one consolidated notification: the group record with its events as the payload. Its id
 * is `<group_id>:<cycle>`, the same on every retry, so a receiver can drop a repeat delivery.
 */
export function notificationAction(outbox: Outbox): Action {
  const { group } = outbox;
  return {
    id: `${group.group_id}:${outbox.job.cycle}`,
    namespace: group.namespace,
    tenant: group.tenant,
    provider: group.provider,
    action_type: group.action_type,
    payload: { ...group, flush_reason: outbox.reason },
    metadata: { labels: group.labels, group_id: group.group_id, group_key: group.group_key },
    created_at: new Date(outbox.claimed_at).toISOString(),
  };
}
