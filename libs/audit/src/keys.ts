import { GLOBAL_SCOPE, spreadScopes, type StateKey } from '@sluice/state';

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
 * Global scope, or on a sharded state (a Redis Cluster) one of AUDIT_SHARDS shard scopes
 * (`{_:#a<n>.<k>}`, below) — members carry the tenant as a scope code:
 *   audit-gix:{_:_}:all               every record
 *   audit-gix:{_:_}:<dim>=<value>     one per filter field and value
 *   audit-exp:{_:_}:due               expiry index: score = expires_at ms
 *   audit-intents:{_:_}:due           actions in flight: score = when to give up on them
 *   audit-ingest:{_:_}:log            the ingest log
 * Global scope only:
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

/** The global index of every record (dimension absent) or of one dimension value, in one shard (absent: unsharded). */
export function globalIndexKey(dimension?: { field: string; value: string }, shard?: number): StateKey {
  return { kind: KIND.globalIndex, ...shardScope(shard), id: indexId(dimension) };
}

/** The expiry index of one shard (absent: unsharded). */
export function expiryIndexKey(shard?: number): StateKey {
  return { kind: KIND.expiryIndex, ...shardScope(shard), id: 'due' };
}

export function scopeCodeKey(code: string): StateKey {
  return { kind: KIND.scopeCode, ...GLOBAL_SCOPE, id: code };
}

/**
 * Shards of the trail's keys that every dispatch writes, on a sharded state (a Redis Cluster):
 * the ingest log, the intents, the global indexes and the expiry index are each AUDIT_SHARDS
 * keys, one per shard scope, so their load spreads over the primaries. 12 divides evenly over
 * 2, 3, 4 and 6 primaries (spreadScopes places the scopes' slots); a query across tenants reads
 * 12 ranges and merges them. Elsewhere (memory, one Redis) each is one key in the global scope.
 */
export const AUDIT_SHARDS = 12;

const SHARD_SCOPES = spreadScopes('_', 'a', AUDIT_SHARDS);

/** The scope of a shard; the global scope when unsharded (undefined). */
function shardScope(shard: number | undefined): { namespace: string; tenant: string } {
  return shard === undefined ? GLOBAL_SCOPE : (SHARD_SCOPES[shard] as { namespace: string; tenant: string });
}

/** The shard of a name (an action id chooses its ingest log and intent, a record id its index entries); undefined when unsharded. */
export function auditShardOf(name: string, sharded: boolean): number | undefined {
  return sharded ? nameHash(name) % AUDIT_SHARDS : undefined;
}

/** Every shard (what a reader of all of them walks): [undefined] when unsharded. */
export function auditShards(sharded: boolean): (number | undefined)[] {
  return sharded ? Array.from({ length: AUDIT_SHARDS }, (_, shard) => shard) : [undefined];
}

/** Actions whose provider call started and whose record is not written yet, scored by when to give up on them. */
function intentIndexKey(shard: number | undefined): StateKey {
  return { kind: KIND.intents, ...shardScope(shard), id: 'due' };
}

/** The intent index of one action. */
export function intentIndexOf(actionId: string, sharded: boolean): StateKey {
  return intentIndexKey(auditShardOf(actionId, sharded));
}

/** Every intent index (what a sweep reads). */
export function intentIndexes(sharded: boolean): StateKey[] {
  return auditShards(sharded).map(intentIndexKey);
}

/** The ingest log the request path appends a record's message to (its action id chooses the shard). */
export function ingestLogKey(shard?: number): StateKey {
  return { kind: KIND.ingestLog, ...shardScope(shard), id: 'log' };
}

export function actionPointerKey(actionId: string): StateKey {
  return { kind: KIND.actionPointer, namespace: '_', tenant: `#${bucketOf(actionId)}`, id: actionId };
}

/** 256 buckets (hex), so a cluster spreads the pointers. */
function bucketOf(actionId: string): string {
  return (nameHash(actionId) & 0xff).toString(16).padStart(2, '0');
}

/** FNV-1a, folded (a hash per dispatch: it must be cheap; it only needs to spread names). */
function nameHash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return (h ^ (h >>> 8) ^ (h >>> 16) ^ (h >>> 24)) >>> 0;
}

/** The field name comes first and never contains '=', so `<field>=<value>` is unambiguous. */
function indexId(dimension: { field: string; value: string } | undefined): string {
  return dimension === undefined ? 'all' : `${dimension.field}=${dimension.value}`;
}
