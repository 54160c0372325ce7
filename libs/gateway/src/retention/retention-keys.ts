import { GLOBAL_SCOPE, type StateKey } from '@sluice/state';

/*
 * State keys of retention policies (the quota policies' scheme). A policy's record lives under
 * its (namespace, tenant) pair, written only by compare-and-swap, so "one policy per pair" is
 * the key itself and settled in the store; a plain key per id reserves the id and lists the
 * policy (scan reads plain values).
 */
export const RETENTION_CHANNEL = 'retention';

/** Changes on every API edit; replicas poll it as a backstop for a missed pub/sub message. */
export const RETENTION_GENERATION_KEY: StateKey = { kind: 'retention-generation', ...GLOBAL_SCOPE, id: 'current' };

export const RETENTION_ID_KIND = 'retention-id';

/** One string per (namespace, tenant); JSON keeps any two pairs distinct whatever they contain. */
export function pairId(namespace: string, tenant: string): string {
  return JSON.stringify([namespace, tenant]);
}

/** The policy of a pair, given as pairId() (a versioned value: the policy JSON, or a tombstone). */
export function policyKey(pair: string): StateKey {
  return { kind: 'retention-policy', ...GLOBAL_SCOPE, id: pair };
}

/** Reserves a policy id (a plain value: the pairId of its policy). */
export function policyIdKey(id: string): StateKey {
  return { kind: RETENTION_ID_KIND, ...GLOBAL_SCOPE, id };
}
