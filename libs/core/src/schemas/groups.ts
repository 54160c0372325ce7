import { z } from 'zod';
import { pageQuery } from './paging.js';
import { AuditDeferred } from './audit-deferred.js';

/** Spec "Event group" states. */
export const GroupState = z.enum(['pending', 'notified', 'resolved']);
export type GroupState = z.infer<typeof GroupState>;

/** One event held by a group (spec "Grouped event"). */
export const GroupedEvent = z.object({
  action_id: z.string(),
  fingerprint: z.string().nullable(),
  status: z.string().nullable(),
  payload: z.record(z.string(), z.unknown()),
  received_at: z.string().describe('RFC 3339'),
});
export type GroupedEvent = z.infer<typeof GroupedEvent>;

/** The full group record (GET /v1/groups/{group_key}, and the payload of its consolidated notification). */
export const EventGroup = z.object({
  group_id: z.string().describe('changes when a new group starts under the same key (a new cycle of an ephemeral group)'),
  group_key: z.string().describe('SHA-256 hex of namespace, tenant, rule and the group_by values'),
  namespace: z.string(),
  tenant: z.string(),
  rule: z.string().describe('the rule whose group action created the group'),
  provider: z.string().describe('where the consolidated notification goes (the provider of the event that opened the group)'),
  action_type: z.string(),
  labels: z.record(z.string(), z.string()).describe('group_by path → value'),
  events: z.array(GroupedEvent).describe('oldest first; at most max_group_size (the oldest are dropped)'),
  event_count: z.number().int(),
  new_event_count: z.number().int().describe('events received since the last notification'),
  dropped_event_count: z.number().int().describe('events dropped (oldest first) because the group was full'),
  state: GroupState,
  notify_at: z.string().describe('RFC 3339; when the next notification is due'),
  last_notified_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  group_wait_seconds: z.number().int(),
  group_interval_seconds: z.number().int(),
  repeat_interval_seconds: z.number().int().nullable().describe('null: ephemeral (deleted after its single flush)'),
  max_group_size: z.number().int(),
});
export type EventGroup = z.infer<typeof EventGroup>;

/** A list entry (spec "Group list entry", plus namespace and tenant). */
export const GroupSummary = z.object({
  group_id: z.string(),
  group_key: z.string(),
  namespace: z.string(),
  tenant: z.string(),
  event_count: z.number().int(),
  state: GroupState,
  notify_at: z.string(),
  created_at: z.string(),
});
export type GroupSummary = z.infer<typeof GroupSummary>;

export const GroupListQuery = z.object({
  namespace: z.string().optional(),
  tenant: z.string().optional(),
  status: GroupState.optional().describe('only groups in this state'),
  ...pageQuery(),
});
export type GroupListQuery = z.infer<typeof GroupListQuery>;

export const GroupList = z.object({
  total: z.number().int().describe('groups matching the filters, before limit/offset'),
  groups: z.array(GroupSummary).describe('soonest notify_at first'),
});
export type GroupList = z.infer<typeof GroupList>;

export const GroupKeyParams = z.object({ group_key: z.string().min(1).max(256) });

/** DELETE /v1/groups/{group_key}: the group was flushed and closed. */
export const GroupFlushResult = z.object({
  group_id: z.string(),
  group_key: z.string(),
  event_count: z.number().int(),
  status: z.literal('flushed'),
  notified: z.boolean().describe('true when the provider accepted the consolidated notification'),
  error: z.string().optional().describe('why the notification failed (it is retried in the background when retryable)'),
});
export type GroupFlushResult = z.infer<typeof GroupFlushResult>;

/** Dispatch outcome of an action added to a group (api-decisions "Dispatch"). */
export const GroupedOutcome = z.object({
  outcome: z.literal('grouped'),
  action_id: z.string(),
  audit: AuditDeferred,
  group_id: z.string(),
  group_size: z.number().int(),
  notify_at: z.string().describe('RFC 3339'),
});
export type GroupedOutcome = z.infer<typeof GroupedOutcome>;
