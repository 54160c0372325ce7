import { GLOBAL_SCOPE } from '../keys.js';
import type { StateKey } from '../state-store.js';

/** Where a record lives: its tenant scope and its id. */
export interface RecordScope {
  namespace: string;
  tenant: string;
}

export interface RecordRef extends RecordScope {
  id: string;
}

/**
 * The keys of one record kind. A record and the indexes of its scope share the scope's hash
 * tag (one Redis Cluster slot); what spans scopes (the id locator, the listing of every record,
 * the generation) lives in the global scope.
 */
export class RecordKeys {
  /** Every record of the kind: members are globalMember(ref), scores creation times. */
  readonly all: StateKey;
  /** Changes on every write of a repository that syncs; replicas poll it behind pub/sub. */
  readonly generation: StateKey;

  constructor(readonly kind: string) {
    this.all = { kind: `${kind}-all`, ...GLOBAL_SCOPE, id: 'ids' };
    this.generation = { kind: `${kind}-generation`, ...GLOBAL_SCOPE, id: 'current' };
  }

  /** Versioned value: the record JSON, or a tombstone once deleted. */
  record(ref: RecordRef): StateKey {
    return { kind: this.kind, namespace: ref.namespace, tenant: ref.tenant, id: ref.id };
  }

  /** The ids of one scope (members), by creation time (scores); bounded when the kind has a maximum. */
  scopeIndex(scope: RecordScope): StateKey {
    return { kind: `${this.kind}-scope`, namespace: scope.namespace, tenant: scope.tenant, id: 'ids' };
  }

  /**
   * One-member index: who holds the id. Ids unique across scopes: a global key, its member the
   * scope (scopeMember) of the record, so it also locates the record. Otherwise a key in the scope.
   */
  idClaim(ref: RecordRef, global: boolean): StateKey {
    return global
      ? { kind: `${this.kind}-id`, ...GLOBAL_SCOPE, id: ref.id }
      : { kind: `${this.kind}-id`, namespace: ref.namespace, tenant: ref.tenant, id: ref.id };
  }

  /** One-member index: the id holding a unique name within a scope. */
  unique(scope: RecordScope, name: string): StateKey {
    return { kind: `${this.kind}-unique`, namespace: scope.namespace, tenant: scope.tenant, id: name };
  }
}

/** JSON keeps any two scopes or refs distinct, whatever characters their parts hold. */
export function scopeMember(scope: RecordScope): string {
  return JSON.stringify([scope.namespace, scope.tenant]);
}

export function globalMember(ref: RecordRef): string {
  return JSON.stringify([ref.namespace, ref.tenant, ref.id]);
}

export function parseScopeMember(member: string): RecordScope | null {
  const parts = parseStrings(member, 2);
  return parts ? { namespace: parts[0] as string, tenant: parts[1] as string } : null;
}

export function parseGlobalMember(member: string): RecordRef | null {
  const parts = parseStrings(member, 3);
  return parts ? { namespace: parts[0] as string, tenant: parts[1] as string, id: parts[2] as string } : null;
}

function parseStrings(member: string, length: number): string[] | null {
  try {
    const parsed: unknown = JSON.parse(member);
    return Array.isArray(parsed) && parsed.length === length && parsed.every((p) => typeof p === 'string') ? parsed : null;
  } catch {
    return null;
  }
}
