import type { paths } from '@sluice/client';

type StreamQuery = NonNullable<paths['/v1/stream']['get']['parameters']['query']>;

/** Dispatch outcomes (the stream's and the audit trail's `outcome` filter); checked against the API's own enum. */
export const OUTCOMES = [
  'executed',
  'suppressed',
  'deduplicated',
  'throttled',
  'rerouted',
  'failed',
  'grouped',
  'state_changed',
  'pending_approval',
  'chain_started',
] as const satisfies readonly NonNullable<StreamQuery['outcome']>[];

/** What the audit trail records besides: `unknown`, a dispatch a process died during (docs/audit.md). */
export const AUDIT_OUTCOMES = [...OUTCOMES, 'unknown'] as const;

/** The stream's event types. */
export const EVENT_TYPES = [
  'action_dispatched',
  'group_flushed',
  'timeout',
  'chain_advanced',
  'approval_required',
  'approval_resolved',
] as const satisfies readonly NonNullable<StreamQuery['event_type']>[];

/** `{"Executed": {...}}` (the stream's externally tagged outcome) as `executed`. */
export function outcomeName(tagged: unknown): string | undefined {
  if (tagged === null || typeof tagged !== 'object') return undefined;
  const tag = Object.keys(tagged)[0];
  return tag?.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
}
