import type { RetentionPolicy } from '@sluice/core';

/** What one reap call did. */
export interface ReapResult {
  deleted: number;
  /** Records the source kept because they are under a compliance hold. */
  skippedCompliance: number;
  errors: number;
}

export interface ReapContext {
  /** An enabled policy without compliance hold: the reaper has already skipped the others. */
  policy: RetentionPolicy;
  /** The cycle's "now" (epoch ms): one instant for every source and policy of a cycle. */
  nowMs: number;
}

/**
 * Something the reaper deletes per (namespace, tenant) once it is older than a policy TTL:
 * chain records (state_ttl_seconds), resolved events (event_ttl_seconds). Each source reads the
 * TTL it cares about from the policy and does nothing when it is unset. Deletes must be
 * idempotent: a cycle may run twice (at-least-once delivery) or overlap a slow previous one.
 */
export interface RetentionSource {
  /** Names the source in logs and in the counters' `source` label. */
  readonly name: string;
  reap(ctx: ReapContext): Promise<ReapResult>;
}

/** The audit store's expiry: deletes up to `limit` records whose expires_at is at or before nowMs; returns how many. */
export interface AuditExpiry {
  expire(nowMs: number, limit: number): Promise<number>;
}

export const NOTHING_REAPED: Readonly<ReapResult> = Object.freeze({ deleted: 0, skippedCompliance: 0, errors: 0 });
