import { AuditFilterFields, type AuditFilterField } from '@sluice/core';
import type { StateKey } from '@sluice/state';
import type { IndexedRecord } from './ingest/ingest.js';
import { chainIndexKey, expiryIndexKey, globalIndexKey, tenantIndexKey, type TenantScope } from './keys.js';

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
  key: StateKey;
  covers: readonly AuditFilterField[];
  /** The scope of a tenant-scope index (members are bare compact ids); null for a global index. */
  scope: TenantScope | null;
}

export function tenantAllIndex(scope: TenantScope): TimeIndex {
  return { key: tenantIndexKey(scope), covers: ['namespace', 'tenant'], scope };
}

export function tenantDimensionIndex(scope: TenantScope, field: (typeof TENANT_DIMENSIONS)[number], value: string): TimeIndex {
  return { key: tenantIndexKey(scope, { field, value }), covers: ['namespace', 'tenant', field], scope };
}

export function globalAllIndex(): TimeIndex {
  return { key: globalIndexKey(), covers: [], scope: null };
}

export function globalDimensionIndex(field: AuditFilterField, value: string): TimeIndex {
  return { key: globalIndexKey({ field, value }), covers: [field], scope: null };
}

/** Where a stored record is indexed. */
export interface RecordPlacement {
  /** Scored by dispatched_at, member = compact id; in the record's slot. */
  tenant: StateKey[];
  /** Scored by dispatched_at, member = compact id + scope code. */
  global: StateKey[];
  /** Chain index (score = sequence_number), when the record is chained. */
  chain: StateKey | null;
  /** Expiry index (score = expires_at), when the record expires. */
  expiry: StateKey | null;
}

export function placementOf(record: IndexedRecord): RecordPlacement {
  const scope = { namespace: record.namespace, tenant: record.tenant };
  const tenant = [tenantAllIndex(scope).key, ...TENANT_DIMENSIONS.map((field) => tenantDimensionIndex(scope, field, record[field]).key)];
  const global = [globalAllIndex().key];
  for (const field of GLOBAL_DIMENSIONS) {
    const value = record[field];
    // A null value matches no filter, so it needs no entry.
    if (value !== null) global.push(globalDimensionIndex(field, value).key);
  }
  return {
    tenant,
    global,
    chain: record.sequence_number === null ? null : chainIndexKey(scope),
    expiry: record.expires_at === null ? null : expiryIndexKey(),
  };
}
