import { AuditRecord } from '@sluice/core';

/** Stored form of a record: its JSON. */
export function encodeRecord(record: AuditRecord): string {
  return JSON.stringify(record);
}

/** Null for absent or unreadable values: a reader treats both as a missing record. */
export function decodeRecord(value: string | null): AuditRecord | null {
  if (value === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return null;
  }
  const result = AuditRecord.safeParse(parsed);
  return result.success ? result.data : null;
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
