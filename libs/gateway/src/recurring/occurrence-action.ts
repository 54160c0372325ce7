import { createHash } from 'node:crypto';
import type { ActionInput, RecurringAction } from '@sluice/core';
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

/** A UUID-shaped (version 8, RFC 9562 "custom") hash of the recurring id and the occurrence time. */
export function occurrenceActionId(id: string, slotMs: number): string {
  const hex = createHash('sha256').update(`${id}\u0000${slotMs}`).digest('hex');
  const variant = ((parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
