import { AuditRecord } from '@sluice/core';
import type { IndexedRecord } from './ingest/ingest.js';

/** Stored form of a record: its JSON. */
export function encodeRecord(record: AuditRecord): string {
  return JSON.stringify(record);
}

/** Null for absent or unreadable values: a reader treats both as a missing record. */
export function decodeRecord(value: string | null): AuditRecord | null {
  return decodeWith(AuditRecord, value);
}

function decodeWith<T>(schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } }, value: string | null): T | null {
  if (value === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return null;
  }
  const result = schema.safeParse(parsed);
  return result.success ? result.data : null;
}

/** What removing a record reads of it: the parts of its keys, not its payload or details. */
const RemovableFields = AuditRecord.pick({
  id: true,
  action_id: true,
  dispatched_at: true,
  expires_at: true,
  sequence_number: true,
  duration_ms: true,
  namespace: true,
  tenant: true,
  provider: true,
  action_type: true,
  outcome: true,
  verdict: true,
  matched_rule: true,
  caller_id: true,
  chain_id: true,
  trace_id: true,
});
export type RemovableRecord = Pick<AuditRecord, keyof IndexedRecord | 'action_id'>;

/**
 * The removable part of a stored record: null as decodeRecord's. Eviction and expiry decode
 * every record they remove; parsing, checking and copying its payload and details would be
 * waste, so they are cut out of the JSON first when it is laid out as encodeRecord writes it.
 * Any other layout is parsed whole.
 */
export function decodeRemovable(value: string | null): RemovableRecord | null {
  const slim = value === null ? null : withoutBody(value);
  return (slim === null ? null : decodeWith(RemovableFields, slim)) ?? decodeWith(RemovableFields, value);
}

/** Where a stored record's body (payload, details, metadata) starts, and the key that follows it. */
const BODY_START = ',"action_payload":';
const BODY_END = ',"dispatched_at":';

/**
 * The record's JSON without its body, as encodeRecord lays it out (null when either key is
 * missing or they are out of order). In that layout neither key can be matched anywhere else:
 * every value before the body is a string or null (whose quotes are escaped), so the first
 * `action_payload` key is the record's own; every value after the record's `dispatched_at` is a
 * string, a number or null, so the last `dispatched_at` key is the record's own, whatever keys
 * the payload or metadata hold. A record laid out otherwise may be cut wrongly: what does not
 * then decode is read whole (decodeRemovable).
 */
export function withoutBody(json: string): string | null {
  const start = json.indexOf(BODY_START);
  const end = json.lastIndexOf(BODY_END);
  return start > 0 && end > start ? json.slice(0, start) + json.slice(end) : null;
}

/** Epoch ms of dispatched_at: the score of every time index. */
export function dispatchedAtMs(record: Pick<AuditRecord, 'dispatched_at'>): number {
  return Date.parse(record.dispatched_at);
}

/** Epoch ms from which the record is gone, or null when it never expires. */
export function expiresAtMs(record: Pick<AuditRecord, 'expires_at'>): number | null {
  return record.expires_at === null ? null : Date.parse(record.expires_at);
}

export function isExpired(record: Pick<AuditRecord, 'expires_at'>, nowMs: number): boolean {
  const expiry = expiresAtMs(record);
  return expiry !== null && expiry <= nowMs;
}
