import { z } from 'zod';
import { AuditDeferred } from './audit-deferred.js';
import { boundedName } from './names.js';

/** A namespace, tenant, state or fingerprint: non-empty, bounded, free of control characters. */
const Name = boundedName();

const Fingerprint = boundedName(1024);

/** Why a dispatch left its event where it was although it asked for another state. */
export const StateRefusal = z.enum(['transition_not_allowed', 'unknown_state']);
export type StateRefusal = z.infer<typeof StateRefusal>;

/**
 * The `state_changed` dispatch outcome (api-decisions). A requested state the machine refuses
 * leaves the event in place: previous_state equals new_state, and `requested_state` and
 * `reason` say what was refused. Both are absent when the event moved or stayed by request.
 */
export const StateChangedOutcome = z.object({
  outcome: z.literal('state_changed'),
  action_id: z.string(),
  audit: AuditDeferred,
  fingerprint: z.string(),
  previous_state: z.string(),
  new_state: z.string(),
  notify: z.boolean().describe('the configured transition asks for a notification (false when nothing moved)'),
  requested_state: z.string().optional().describe('present when the requested state was refused'),
  reason: StateRefusal.optional(),
});
export type StateChangedOutcome = z.infer<typeof StateChangedOutcome>;

/** GET /v1/events/{fingerprint}, PUT .../transition. */
export const EventFingerprintParams = z.object({ fingerprint: Fingerprint });

export const EventScopeQuery = z.object({
  namespace: Name.describe('the event namespace (required)'),
  tenant: Name.describe('the event tenant (required)'),
});
export type EventScopeQuery = z.infer<typeof EventScopeQuery>;

const MAX_EVENT_LIST_LIMIT = 1000;

export const EventListQuery = EventScopeQuery.extend({
  status: Name.optional().describe('only events currently in this state'),
  limit: z.number().int().min(1).max(MAX_EVENT_LIST_LIMIT).default(100).describe('most recently changed first'),
});
export type EventListQuery = z.infer<typeof EventListQuery>;

/** One event's lifecycle record. `state`, `fingerprint`, `action_type` and `updated_at` are the reference's fields. */
export const EventRecordView = z.object({
  fingerprint: z.string(),
  namespace: z.string(),
  tenant: z.string(),
  state_machine: z.string(),
  state: z.string(),
  action_type: z.string().nullable().describe('the action type of the last dispatch that touched the event'),
  created_at: z.string(),
  updated_at: z.string().describe('when the event entered its current state'),
  transition_count: z.number().int().describe('state changes so far'),
  version: z.number().int().describe('grows by one with every stored change'),
  timeout_at: z.string().nullable().describe('when the current state times out, if it has a timeout'),
});
export type EventRecordView = z.infer<typeof EventRecordView>;

export const EventList = z.object({
  events: z.array(EventRecordView),
  count: z.number().int().describe('entries in this response'),
});
export type EventList = z.infer<typeof EventList>;

/** PUT /v1/events/{fingerprint}/transition. `to_state` is the reference docs' spelling of `to`. */
export const EventTransitionInput = z.strictObject({
  to: Name.optional().describe('the target state'),
  to_state: Name.optional().describe('alias of to'),
  namespace: Name,
  tenant: Name,
});
export type EventTransitionInput = z.infer<typeof EventTransitionInput>;

export const EventTransitionResult = z.object({
  fingerprint: z.string(),
  previous_state: z.string(),
  new_state: z.string(),
  notify: z.boolean(),
});
export type EventTransitionResult = z.infer<typeof EventTransitionResult>;
