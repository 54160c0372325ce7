import { GLOBAL_SCOPE, type StateKey } from '@sluice/state';

/*
 * Every key the audit store touches, in one place.
 *
 * Tenant scope (namespace, tenant) — one Redis Cluster slot per tenant, so the chain CAS and the
 * record write run as one script:
 *   audit:{ns:t}:<record id>          the record (JSON, plain value, no backend TTL)
 *   audit-head:{ns:t}:chain           hash-chain head {s: sequence, h: record_hash} (versioned)
 *   audit-chain:{ns:t}:seq            chain index: score = sequence_number, member = compact id
 *   audit-tix:{ns:t}:all              tenant index: score = dispatched_at ms, member = compact id
 *   audit-tix:{ns:t}:<dim>=<value>    tenant compound indexes (outcome, provider, action_type)
 * Global scope — members carry the tenant as a scope code:
 *   audit-gix:{_:_}:all               every record
 *   audit-gix:{_:_}:<dim>=<value>     one per filter field and value
 *   audit-exp:{_:_}:due               expiry index: score = expires_at ms
 *   audit-scope:{_:_}:<code>          scope code → [namespace, tenant] (written once, never changed)
 * Hashed scope (256 slots' worth of buckets, so a cluster spreads them):
 *   audit-ids:{_:#xx}:<action id>     sorted set: the refs of the records of an action id (one per tenant that used it), newest first
 *
 * Tenant-scope and global indexes use different kinds so a tenant named like GLOBAL_SCOPE cannot
 * share a key with a global index.
 */

export interface TenantScope {
  namespace: string;
  tenant: string;
}

export const KIND = {
  record: 'audit',
  chainHead: 'audit-head',
  chainIndex: 'audit-chain',
  tenantIndex: 'audit-tix',
  globalIndex: 'audit-gix',
  expiryIndex: 'audit-exp',
  scopeCode: 'audit-scope',
  // A sorted set since ids became per tenant (a string before: a new kind, so old keys are never read as sets).
  actionPointer: 'audit-ids',
  intents: 'audit-intents',
  // A durable name: the one log of an unsharded state is `<prefix>:audit-ingest:{_:_}:log`.
  ingestLog: 'audit-ingest',
} as const;

export function recordKey(scope: TenantScope, recordId: string): StateKey {
  return { kind: KIND.record, namespace: scope.namespace, tenant: scope.tenant, id: recordId };
}

export function chainHeadKey(scope: TenantScope): StateKey {
  return { kind: KIND.chainHead, namespace: scope.namespace, tenant: scope.tenant, id: 'chain' };
}

export function chainIndexKey(scope: TenantScope): StateKey {
  return { kind: KIND.chainIndex, namespace: scope.namespace, tenant: scope.tenant, id: 'seq' };
}

/** The tenant's index of every record (dimension absent) or of one dimension value. */
export function tenantIndexKey(scope: TenantScope, dimension?: { field: string; value: string }): StateKey {
  return { kind: KIND.tenantIndex, namespace: scope.namespace, tenant: scope.tenant, id: indexId(dimension) };
}

/** The global index of every record (dimension absent) or of one dimension value. */
export function globalIndexKey(dimension?: { field: string; value: string }): StateKey {
  return { kind: KIND.globalIndex, ...GLOBAL_SCOPE, id: indexId(dimension) };
}

export function expiryIndexKey(): StateKey {
  return { kind: KIND.expiryIndex, ...GLOBAL_SCOPE, id: 'due' };
}

export function scopeCodeKey(code: string): StateKey {
  return { kind: KIND.scopeCode, ...GLOBAL_SCOPE, id: code };
}

/**
 * Actions whose provider call started and whose record is not written yet, scored by when to give
 * up on them. One index, or on a sharded state (a Redis Cluster) one per ingest shard (`{_:#n<n>}`),
 * the action's id choosing: every dispatch that calls a provider writes there.
 */
function intentIndexKey(shard?: number): StateKey {
  return shard === undefined ? { kind: KIND.intents, ...GLOBAL_SCOPE, id: 'due' } : { kind: KIND.intents, namespace: '_', tenant: `#n${shard}`, id: 'due' };
}

/** The intent index of one action. */
export function intentIndexOf(actionId: string, sharded: boolean): StateKey {
  return intentIndexKey(sharded ? ingestShardOf(actionId) : undefined);
}

/** Every intent index (what a sweep reads). */
export function intentIndexes(sharded: boolean): StateKey[] {
  return sharded ? Array.from({ length: INGEST_SHARDS }, (_, shard) => intentIndexKey(shard)) : [intentIndexKey()];
}

/**
 * The ingest log the request path appends a record's message to. One log (in the global scope)
 * unless the state is sharded (a Redis Cluster): then INGEST_SHARDS logs, each in a scope of its
 * own (`{_:#i<n>}`), the record's action id choosing one, so the appends spread over the nodes.
 */
export function ingestLogKey(shard?: number): StateKey {
  return shard === undefined ? { kind: KIND.ingestLog, ...GLOBAL_SCOPE, id: 'log' } : { kind: KIND.ingestLog, namespace: '_', tenant: `#i${shard}`, id: 'log' };
}

/** Logs of a sharded ingest (docs/cluster.md): enough to spread over a few primaries, few enough to poll. */
export const INGEST_SHARDS = 8;

/** The shard of an action's ingest messages. */
export function ingestShardOf(actionId: string): number {
  return Number.parseInt(bucketOf(actionId), 16) % INGEST_SHARDS;
}

export function actionPointerKey(actionId: string): StateKey {
  return { kind: KIND.actionPointer, namespace: '_', tenant: `#${bucketOf(actionId)}`, id: actionId };
}

/** 256 buckets by FNV-1a (a hash per dispatch: it must be cheap; it only needs to spread ids). */
function bucketOf(actionId: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < actionId.length; i++) h = Math.imul(h ^ actionId.charCodeAt(i), 0x01000193);
  return ((h ^ (h >>> 8) ^ (h >>> 16) ^ (h >>> 24)) & 0xff).toString(16).padStart(2, '0');
}

/** The field name comes first and never contains '=', so `<field>=<value>` is unambiguous. */
function indexId(dimension: { field: string; value: string } | undefined): string {
  return dimension === undefined ? 'all' : `${dimension.field}=${dimension.value}`;
}
