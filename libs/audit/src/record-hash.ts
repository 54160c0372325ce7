import { createHash } from 'node:crypto';
import type { AuditRecord } from '@sluice/core';

/** The fields a record hash covers, in the (alphabetical) order they are serialized. */
type HashedFields = Pick<
  AuditRecord,
  'action_id' | 'action_type' | 'dispatched_at' | 'id' | 'namespace' | 'outcome' | 'previous_hash' | 'provider' | 'tenant' | 'verdict'
>;

/**
 * Lowercase hex SHA-256 of the compact JSON of the hashed fields, keys sorted alphabetically,
 * as the reference implementation computes it (so its verifiers accept our chains). dispatched_at
 * is hashed in chrono's to_rfc3339 form: "+00:00" offset, fraction only when not whole seconds.
 */
export function recordHash(record: HashedFields): string {
  const canonical = JSON.stringify({
    action_id: record.action_id,
    action_type: record.action_type,
    dispatched_at: rfc3339(record.dispatched_at),
    id: record.id,
    namespace: record.namespace,
    outcome: record.outcome,
    previous_hash: record.previous_hash,
    provider: record.provider,
    tenant: record.tenant,
    verdict: record.verdict,
  });
  return createHash('sha256').update(canonical).digest('hex');
}

/** "2026-01-01T00:00:00.120Z" → "2026-01-01T00:00:00.120+00:00"; whole seconds drop the fraction. */
export function rfc3339(timestamp: string): string {
  const ms = Date.parse(timestamp);
  if (Number.isNaN(ms)) return timestamp; // hashed as stored; only a tampered record gets here
  const iso = new Date(ms).toISOString();
  return `${iso.endsWith('.000Z') ? iso.slice(0, -5) : iso.slice(0, -1)}+00:00`;
}
