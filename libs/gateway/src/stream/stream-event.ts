import { randomUUID } from 'node:crypto';
import type { DispatchOutcome } from '@sluice/core';
import type { InternalEvent } from '../events/internal-events.js';

/** The event types the stream carries (the spec's, and the reference's approval_resolved); other internal events stay inside. */
const STREAM_EVENT_TYPES = ['action_dispatched', 'group_flushed', 'timeout', 'chain_advanced', 'approval_required', 'approval_resolved'] as const;
type StreamEventType = (typeof STREAM_EVENT_TYPES)[number];

/** One stream event, redacted: what is published between replicas and written to clients. */
export interface StreamEvent {
  id: string;
  type: StreamEventType;
  timestamp: string;
  namespace: string;
  tenant: string;
  /** The type's own fields (action_dispatched: outcome, provider, action_type, action_id). */
  fields: Record<string, unknown>;
  /** action_dispatched: the outcome's wire name, for the `outcome` filter. */
  outcome?: string;
}

/** What the gateway reports of each (non dry-run) dispatch. */
interface DispatchedData {
  action_id: string;
  action_type: string;
  provider: string;
  outcome: DispatchOutcome;
}

const isStreamType = (type: string): type is StreamEventType => (STREAM_EVENT_TYPES as readonly string[]).includes(type);

/** The stream form of an internal event, redacted; null for event types the stream does not carry. */
export function streamEventOf(event: InternalEvent): StreamEvent | null {
  if (!isStreamType(event.type)) return null;
  const base = { id: randomUUID(), type: event.type, timestamp: event.at, namespace: event.namespace, tenant: event.tenant };
  if (event.type !== 'action_dispatched') return { ...base, fields: event.data };
  const data = event.data as unknown as DispatchedData;
  return {
    ...base,
    outcome: data.outcome.outcome,
    fields: { outcome: externallyTagged(data.outcome), provider: data.provider, action_type: data.action_type, action_id: data.action_id },
  };
}

/**
 * The spec's stream form of an outcome: one key, the outcome's PascalCase name, holding its
 * fields; a provider response has its body nulled and its headers emptied, approval links read
 * `[redacted]` (they are credentials).
 */
function externallyTagged(outcome: DispatchOutcome): Record<string, unknown> {
  const { outcome: name, action_id: _id, ...fields } = outcome;
  const tag = name.replace(/(^|_)([a-z])/g, (_m, _sep, c: string) => c.toUpperCase());
  if ('response' in fields) {
    const redacted = { ...fields.response, body: null, headers: {} };
    return { [tag]: name === 'executed' ? redacted : { ...fields, response: redacted } };
  }
  if ('approve_url' in fields) return { [tag]: { ...fields, approve_url: '[redacted]', reject_url: '[redacted]' } };
  return { [tag]: fields };
}

/** The SSE frame of an event: `event:`, a unique `id:`, one-line JSON `data:`. */
export function eventFrame(event: StreamEvent): string {
  const data = { id: event.id, timestamp: event.timestamp, type: event.type, ...event.fields, namespace: event.namespace, tenant: event.tenant };
  return `event: ${event.type}\nid: ${event.id}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** `lagged` has no id: it is about the connection, not an event. */
export function laggedFrame(skipped: number): string {
  return `event: lagged\ndata: ${JSON.stringify({ skipped })}\n\n`;
}

export const KEEP_ALIVE_FRAME = ': ping\n\n';

export interface StreamFilter {
  namespace?: string | undefined;
  action_type?: string | undefined;
  outcome?: string | undefined;
  event_type?: string | undefined;
}

/** The query filters, AND-ed; `visible` is the caller's tenant grants. An `outcome` filter keeps dispatch events only. */
export function matches(event: StreamEvent, filter: StreamFilter, visible: (scope: { namespace: string; tenant: string }) => boolean): boolean {
  if (filter.namespace !== undefined && event.namespace !== filter.namespace) return false;
  if (filter.event_type !== undefined && event.type !== filter.event_type) return false;
  if (filter.outcome !== undefined && event.outcome !== filter.outcome) return false;
  if (filter.action_type !== undefined && event.fields['action_type'] !== filter.action_type) return false;
  return visible(event);
}
