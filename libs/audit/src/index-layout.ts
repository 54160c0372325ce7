import { AuditFilterFields, type AuditFilterField } from '@sluice/core';
import { shareKey, type StateKey } from '@sluice/state';
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

/** Where a stored record is indexed. Shared between records of one shape: read it, never change it. */
export interface RecordPlacement {
  /** Scored by dispatched_at, member = compact id; in the record's slot. */
  readonly tenant: readonly StateKey[];
  /** Scored by dispatched_at, member = compact id + scope code; in the record id's shard when sharded. */
  readonly global: readonly StateKey[];
  /** Chain index (score = sequence_number), when the record is chained. */
  readonly chain: StateKey | null;
  /** Expiry index (score = expires_at), when the record expires. */
  readonly expiry: StateKey | null;
}

/**
 * Filter fields that are (nearly) one record's own: every trace, every chain. Their index keys
 * are built per record; a shape that included them would be a new shape per record.
 */
const OWN_FIELDS: readonly AuditFilterField[] = ['chain_id', 'trace_id'];
const SHAPE_FIELDS = GLOBAL_DIMENSIONS.filter((field) => !OWN_FIELDS.includes(field));

/**
 * Placements by record shape (its filter fields but its own, its shard, and whether it is
 * chained and expires). Records of one shape share one placement, and so the same key objects,
 * which the state store renders once (shareKey): most records of a batch share a shape. Cleared
 * when full, so many shapes cost a bounded amount of memory and a re-render.
 */
const placements = new Map<string, RecordPlacement>();
const MAX_PLACEMENTS = 1024;

export function placementOf(record: IndexedRecord, sharded: boolean): RecordPlacement {
  const shard = auditShardOf(record.id, sharded);
  // JSON: unambiguous whatever the values hold.
  const shape = JSON.stringify([shard ?? null, record.sequence_number === null, record.expires_at === null, ...SHAPE_FIELDS.map((field) => record[field])]);
  let shared = placements.get(shape);
  if (shared === undefined) {
    if (placements.size >= MAX_PLACEMENTS) placements.clear();
    shared = buildPlacement(record, shard);
    placements.set(shape, shared);
  }
  // Most records have neither: they get the shared placement itself, no array built.
  let global: StateKey[] | undefined;
  for (const field of OWN_FIELDS) {
    const value = record[field];
    if (value === null) continue;
    global ??= [...shared.global];
    global.push(globalIndexKey({ field, value }, shard));
  }
  return global === undefined ? shared : { ...shared, global };
}

/** A shape's placement, its keys shared: every index but those of the record's own fields. */
function buildPlacement(record: IndexedRecord, shard: number | undefined): RecordPlacement {
  const scope = { namespace: record.namespace, tenant: record.tenant };
  const tenant = [tenantIndexKey(scope), ...TENANT_DIMENSIONS.map((field) => tenantIndexKey(scope, { field, value: record[field] }))];
  const global = [globalIndexKey(undefined, shard)];
  for (const field of SHAPE_FIELDS) {
    const value = record[field];
    // A null value matches no filter, so it needs no entry.
    if (value !== null) global.push(globalIndexKey({ field, value }, shard));
  }
  const shared = (key: StateKey | null) => (key === null ? null : shareKey(key));
  return Object.freeze({
    tenant: Object.freeze(tenant.map(shareKey)),
    global: Object.freeze(global.map(shareKey)),
    chain: shared(record.sequence_number === null ? null : chainIndexKey(scope)),
    expiry: shared(record.expires_at === null ? null : expiryIndexKey(shard)),
  });
}
