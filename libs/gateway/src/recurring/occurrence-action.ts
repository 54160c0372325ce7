import { derivedId, type ActionInput, type RecurringAction } from '@sluice/core';
import type { DispatchCaller } from '../pipeline/context.js';

/**
 * The action one occurrence dispatches: the record's template, with an id derived from
 * (recurring id, scheduled time). The same occurrence always gets the same action id, so a
 * receiver (or an audit search) can tell a duplicate from a new occurrence.
 */
export function occurrenceAction(record: RecurringAction, slotMs: number): ActionInput {
  const occurrence = new Date(slotMs).toISOString();
  return {
    id: occurrenceActionId(record.id, slotMs),
    namespace: record.namespace,
    tenant: record.tenant,
    provider: record.provider,
    action_type: record.action_type,
    payload: record.payload,
    metadata: { ...record.metadata, recurring_id: record.id, recurring_occurrence: occurrence },
    ...(record.dedup_key !== undefined ? { dedup_key: record.dedup_key } : {}),
  };
}

/** Who audit says dispatched an occurrence: `GET /v1/audit?caller_id=recurring:<id>` lists them. */
export function occurrenceCaller(id: string): DispatchCaller {
  return { id: `recurring:${id}`, method: 'internal' };
}

/** Derived from the recurring id and the occurrence time (a UUID-shaped hash). */
export function occurrenceActionId(id: string, slotMs: number): string {
  return derivedId(id, slotMs);
}
