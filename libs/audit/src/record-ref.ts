import { COMPACT_ID_LENGTH, compactId, expandId } from './record-id.js';
import type { TenantScope } from './keys.js';

/** Where a record lives: its tenant scope and id. */
export interface RecordRef extends TenantScope {
  id: string;
}

/*
 * Index members. Every member starts with the compact id, so ties in score order by record id in
 * every index alike and a cursor stays valid whichever index the next page is read from.
 * Tenant-scope indexes imply the scope; global members append the scope code.
 */

export function tenantMember(recordId: string): string {
  return compactId(recordId);
}

export function globalMember(recordId: string, scopeCode: string): string {
  return compactId(recordId) + scopeCode;
}

/** The record id a member names; null for a member this store did not write. */
export function memberRecordId(member: string): string | null {
  return expandId(member.slice(0, COMPACT_ID_LENGTH));
}

export function memberScopeCode(member: string): string {
  return member.slice(COMPACT_ID_LENGTH);
}

/** The compact-id part, for comparing positions across indexes. */
export function memberPosition(member: string): string {
  return member.slice(0, COMPACT_ID_LENGTH);
}
