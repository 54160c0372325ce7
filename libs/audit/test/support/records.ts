import type { AuditRecord, NewAuditRecord } from '@sluice/core';

/** A record draft as the gateway's writer builds it; every field overridable. */
export function draft(overrides: Partial<NewAuditRecord> & { dispatchedAtMs?: number } = {}): NewAuditRecord {
  const { dispatchedAtMs = Date.UTC(2026, 0, 1), ...fields } = overrides;
  const dispatched = new Date(dispatchedAtMs).toISOString();
  return {
    action_id: 'act-1',
    chain_id: null,
    trace_id: null,
    namespace: 'ns',
    tenant: 't1',
    provider: 'email',
    action_type: 'notify',
    verdict: 'allow',
    matched_rule: null,
    outcome: 'executed',
    action_payload: { to: 'a@example.com' },
    verdict_details: { verdict: 'allow' },
    outcome_details: { status: 'Success' },
    metadata: {},
    dispatched_at: dispatched,
    completed_at: new Date(dispatchedAtMs + 5).toISOString(),
    duration_ms: 5,
    expires_at: null,
    caller_id: 'caller-1',
    auth_method: 'api_key',
    ...fields,
  };
}

/** The store's order: dispatched_at descending, then record id descending. */
export function newestFirst(a: AuditRecord, b: AuditRecord): number {
  const byTime = Date.parse(b.dispatched_at) - Date.parse(a.dispatched_at);
  if (byTime !== 0) return byTime;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** A deterministic mix of field values, so every filter selects a different subset. */
export function variedDraft(i: number, baseMs: number): NewAuditRecord {
  const pick = <T>(values: readonly T[], salt: number): T => values[(i * salt + (i >> 2)) % values.length] as T;
  return draft({
    action_id: `act-${i}`,
    namespace: pick(['ns-a', 'ns-b'], 1),
    tenant: pick(['t1', 't2', 't3'], 1),
    provider: pick(['email', 'sms', 'webhook'], 5),
    action_type: pick(['notify', 'page', 'ticket'], 7),
    outcome: pick(['executed', 'suppressed', 'failed', 'throttled'], 3),
    verdict: pick(['allow', 'suppress', 'throttle'], 11),
    matched_rule: pick([null, 'rule-a', 'rule-b'], 13),
    caller_id: pick(['alice', 'bob', 'carol'], 17),
    chain_id: pick([null, 'chain-x', 'chain-y'], 19),
    trace_id: pick([null, 'a'.repeat(32), 'b'.repeat(32)], 23),
    // Three records per timestamp: ties are ordered by record id.
    dispatchedAtMs: baseMs + Math.floor(i / 3) * 1000,
  });
}
