import { CARRIED_ACTION_FIELDS, isoString, type Action, type ActionInput, type DispatchOutcome, type NewAuditRecord } from '@sluice/core';
import type { DispatchCaller } from '../pipeline/context.js';

/** Only in the trail: a provider call whose process died before the outcome was known. */
interface UnknownOutcome {
  outcome: 'unknown';
  action_id: string;
  reason: string;
}

export interface RecordInput {
  action: Action;
  outcome: Exclude<DispatchOutcome, { outcome: 'dry_run' }> | UnknownOutcome;
  verdict: string;
  matchedRule: string | null;
  /** Details for the record only, beside the outcome's own (a silence's comment). */
  details: Record<string, unknown> | undefined;
  caller: DispatchCaller | undefined;
  /** The chain run the dispatch started or is a step of. */
  chainId?: string | undefined;
  /** The dispatch's W3C trace id, when it has one. */
  traceId?: string | null | undefined;
  dispatchedAtMs: number;
  completedAtMs: number;
  /** Null when the record never expires. */
  ttlMs: number | null;
  /** The payload as it should be stored (redacted), or null when payloads are not stored. */
  storedPayload: Record<string, unknown> | null;
}

/**
 * Outcome fields the trail keeps as `[redacted]`: a signed approval link is a credential (whoever
 * holds it decides), and the trail is readable by callers who may not decide (a viewer).
 */
const CREDENTIAL_FIELDS = new Set(['approve_url', 'reject_url']);

/**
 * The outcome's own fields (without outcome and action_id); a provider response is reduced to its
 * status, approval links are redacted. A loop, not rest destructuring: this runs on every dispatch
 * and object rest is V8's slow path.
 */
function outcomeDetails(outcome: RecordInput['outcome']): Record<string, unknown> {
  const details: Record<string, unknown> = {};
  for (const key in outcome) {
    if (key === 'outcome' || key === 'action_id') continue;
    const value = (outcome as Record<string, unknown>)[key];
    if (key === 'response') details.status = (value as { status: unknown }).status;
    else details[key] = CREDENTIAL_FIELDS.has(key) ? '[redacted]' : value;
  }
  return details;
}

/** The record of one dispatch; the store assigns its id (time-ordered) when it writes it. */
export function buildAuditRecord(input: RecordInput): NewAuditRecord {
  const { action } = input;
  const metadata: Record<string, unknown> = { ...action.metadata };
  for (const field of CARRIED_ACTION_FIELDS) if (action[field] !== undefined) metadata[`__${field}`] = action[field];
  return {
    action_id: action.id,
    chain_id: input.chainId ?? null,
    trace_id: input.traceId ?? null,
    namespace: action.namespace,
    tenant: action.tenant,
    provider: action.provider,
    action_type: action.action_type,
    verdict: input.verdict,
    matched_rule: input.matchedRule,
    outcome: input.outcome.outcome,
    action_payload: input.storedPayload,
    verdict_details: { verdict: input.verdict },
    outcome_details: input.details ? { ...outcomeDetails(input.outcome), ...input.details } : outcomeDetails(input.outcome),
    metadata,
    dispatched_at: isoString(input.dispatchedAtMs),
    completed_at: isoString(input.completedAtMs),
    duration_ms: input.completedAtMs - input.dispatchedAtMs,
    expires_at: input.ttlMs === null ? null : isoString(input.dispatchedAtMs + input.ttlMs),
    caller_id: input.caller?.id ?? 'internal',
    auth_method: input.caller?.method ?? 'internal',
  };
}

/** The action a replay dispatches: the stored one under a new id, labelled `replayed_from`. */
export function replayAction(record: NewAuditRecord, newId: string): ActionInput | null {
  if (record.action_payload === null) return null;
  const metadata: Record<string, unknown> = {};
  const carried: Partial<Record<(typeof CARRIED_ACTION_FIELDS)[number], string>> = {};
  for (const [key, value] of Object.entries(record.metadata)) {
    const field = CARRIED_ACTION_FIELDS.find((f) => key === `__${f}`);
    if (field && typeof value === 'string') carried[field] = value;
    else if (!field) metadata[key] = value;
  }
  const labels = { ...((metadata.labels as Record<string, string> | undefined) ?? {}), replayed_from: record.action_id };
  return {
    ...carried,
    id: newId,
    namespace: record.namespace,
    tenant: record.tenant,
    provider: record.provider,
    action_type: record.action_type,
    payload: record.action_payload,
    metadata: { ...metadata, labels },
  };
}
