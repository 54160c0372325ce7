import { GLOBAL_SCOPE, type StateKey } from '@sluice/state';

/*
 * State keys of the quota feature. An API policy's record lives under its scope pair, so "one
 * policy per (namespace, tenant)" is the key itself (written by compare-and-swap), not a
 * check-then-write; a plain key per id reserves the id and lists the policy (scan needs plain
 * values). Counters live in the counted tenant's own slot.
 */
export const QUOTAS_CHANNEL = 'quotas';

/** Changes on every API edit; replicas poll it as a backstop for a missed pub/sub message. */
export const QUOTAS_GENERATION_KEY: StateKey = { kind: 'quotas-generation', ...GLOBAL_SCOPE, id: 'current' };

export const ID_KIND = 'quota-id';

/** One string per (namespace, tenant); JSON keeps any two pairs distinct whatever they contain. */
export function scopeId(namespace: string, tenant: string): string {
  return JSON.stringify([namespace, tenant]);
}

/** The API policy of a scope pair, given as scopeId() (a versioned value: the policy JSON). */
export function policyKey(scope: string): StateKey {
  return { kind: 'quota-policy', ...GLOBAL_SCOPE, id: scope };
}

/** Reserves an API policy id (a plain value: the scopeId of its policy). */
export function policyIdKey(id: string): StateKey {
  return { kind: ID_KIND, ...GLOBAL_SCOPE, id };
}

/**
 * The counter of one policy for one tenant in one window. The window name is part of the id so
 * a policy switched from daily to hourly never reuses the daily counter that starts at midnight.
 */
export function counterKey(policyId: string, window: string, namespace: string, tenant: string, startMs: number): StateKey {
  return { kind: 'quota', namespace, tenant, id: `${policyId}:${window}:${startMs}` };
}
