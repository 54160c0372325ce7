import { escapeComponent, type StateKey } from '@sluice/state';

/*
 * State keys of event lifecycles. An event is a versioned value per (namespace, tenant,
 * fingerprint), written only by compare-and-swap; each write also moves the fingerprint in its
 * tenant's index (score = when it entered its state) in the same atomic step, which lists the
 * events newest first and lets retention find old ones. Both keys share the tenant's slot.
 */

const EVENT_KIND = 'event';
const EVENT_INDEX_KIND = 'event-index';

export function eventKey(namespace: string, tenant: string, fingerprint: string): StateKey {
  return { kind: EVENT_KIND, namespace, tenant, id: fingerprint };
}

export function eventIndexKey(namespace: string, tenant: string): StateKey {
  return { kind: EVENT_INDEX_KIND, namespace, tenant, id: 'by-entered' };
}

/** The durable queue of state timeouts (a BullMQ queue name: never rename). */
export const STATE_TIMEOUT_KIND = 'state-timeout';

/**
 * One job per stay in a timed state: the version that entered it, the instant it did, and the
 * machine and state it entered. A version is written once, so every process that reads the
 * record derives the same id; two writers racing for one version (in one millisecond) into
 * different states get different ids; and a later stay never reuses an id, even after the
 * event is deleted and recreated (versions then restart, instants do not).
 */
export function timeoutJobId(
  stay: { namespace: string; tenant: string; fingerprint: string; state_machine: string; state: string },
  version: number,
  enteredAtMs: number,
): string {
  const parts = [stay.namespace, stay.tenant, stay.fingerprint, String(version), String(enteredAtMs), stay.state_machine, stay.state];
  return parts.map(escapeComponent).join(':');
}
