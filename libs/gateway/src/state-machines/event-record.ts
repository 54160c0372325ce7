import type { EventRecordView } from '@sluice/core';

/** What the store keeps for one event (the version lives beside it, in the versioned value). */
export interface EventRecord {
  fingerprint: string;
  namespace: string;
  tenant: string;
  state_machine: string;
  state: string;
  action_type: string | null;
  created_at: string;
  /** When the event entered its current state (RFC 3339); timeouts count from here. */
  updated_at: string;
  transition_count: number;
  /** When the current state times out, if it has a timeout. */
  timeout_at: string | null;
}

export interface StoredEvent {
  record: EventRecord;
  version: number;
}

export function parseEventRecord(json: string): EventRecord {
  return JSON.parse(json) as EventRecord;
}

export function enteredAtMs(record: EventRecord): number {
  return Date.parse(record.updated_at);
}

export function toView(stored: StoredEvent): EventRecordView {
  const r = stored.record;
  return {
    fingerprint: r.fingerprint,
    namespace: r.namespace,
    tenant: r.tenant,
    state_machine: r.state_machine,
    state: r.state,
    action_type: r.action_type,
    created_at: r.created_at,
    updated_at: r.updated_at,
    transition_count: r.transition_count,
    version: stored.version,
    timeout_at: r.timeout_at,
  };
}
