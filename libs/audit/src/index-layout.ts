import { AuditFilterFields, type AuditFilterField } from '@sluice/core';
import type { StateKey } from '@sluice/state';
import type { IndexedRecord } from './ingest/ingest.js';
import { auditShardOf, auditShards, chainIndexKey, expiryIndexKey, globalIndexKey, tenantIndexKey, type TenantScope } from './keys.js';

/*
 * Which time indexes exist, and which of them a record belongs to. Removal derives the same list
 * from the stored record, so what append adds, expire removes.
 */

/** Dimensions with a compound index inside the tenant scope: the most common tenant filters. */
export const TENANT_DIMENSIONS = ['outcome', 'provider', 'action_type'] as const satisfies readonly AuditFilterField[];

/** Every filter field has a global index (tenant too, for tenant filters without a namespace). */
export const GLOBAL_DIMENSIONS = AuditFilterFields;

/** An index together with the filters membership in it implies. */
export interface TimeIndex {
  /** Its keys: one, or a global index's shards on a sharded state (read together, merged). */
  keys: StateKey[];
  covers: readonly AuditFilterField[];
  /** The scope of a tenant-scope index (members are bare compact ids); null for a global index. */
  scope: TenantScope | null;
}

export function tenantAllIndex(scope: TenantScope): TimeIndex {
  return { keys: [tenantIndexKey(scope)], covers: ['namespace', 'tenant'], scope };
}

export function tenantDimensionIndex(scope: TenantScope, field: (typeof TENANT_DIMENSIONS)[number], value: string): TimeIndex {
  return { keys: [tenantIndexKey(scope, { field, value })], covers: ['namespace', 'tenant', field], scope };
}

export function globalAllIndex(sharded: boolean): TimeIndex {
  return { keys: auditShards(sharded).map((shard) => globalIndexKey(undefined, shard)), covers: [], scope: null };
}

export function globalDimensionIndex(field: AuditFilterField, value: string, sharded: boolean): TimeIndex {
  return { keys: auditShards(sharded).map((shard) => globalIndexKey({ field, value }, shard)), covers: [field], scope: null };
}

/** The expiry index: one key, or one per shard. */
export function expiryIndexes(sharded: boolean): StateKey[] {
  return auditShards(sharded).map((shard) => expiryIndexKey(shard));
}

/** Where a stored record is indexed. */
export interface RecordPlacement {
  /** Scored by dispatched_at, member = compact id; in the record's slot. */
  tenant: StateKey[];
  /** Scored by dispatched_at, member = compact id + scope code; in the record id's shard when sharded. */
  global: StateKey[];
  /** Chain index (score = sequence_number), when the record is chained. */
  chain: StateKey | null;
  /** Expiry index (score = expires_at), when the record expires. */
  expiry: StateKey | null;
}

export function placementOf(record: IndexedRecord, sharded: boolean): RecordPlacement {
  const scope = { namespace: record.namespace, tenant: record.tenant };
  const tenant = [tenantIndexKey(scope), ...TENANT_DIMENSIONS.map((field) => tenantIndexKey(scope, { field, value: record[field] }))];
  const shard = auditShardOf(record.id, sharded);
  const global = [globalIndexKey(undefined, shard)];
  for (const field of GLOBAL_DIMENSIONS) {
    const value = record[field];
    // A null value matches no filter, so it needs no entry.
    if (value !== null) global.push(globalIndexKey({ field, value }, shard));
  }
  return {
    tenant,
    global,
    chain: record.sequence_number === null ? null : chainIndexKey(scope),
    expiry: record.expires_at === null ? null : expiryIndexKey(shard),
  };
}
