import type { AuditRecord } from '@sluice/core';
import type { StateStore } from '@sluice/state';
import { recordKey, type TenantScope } from './keys.js';
import { decodeRecord, decodeRemovable, type RemovableRecord } from './record-codec.js';
import { memberRecordId, memberScopeCode, type RecordRef } from './record-ref.js';
import type { ScopeCodes } from './scope-codes.js';

/** Turns index members into records: members → refs (resolving scope codes) → one getMany. */
export class RecordReader {
  constructor(
    private readonly store: StateStore,
    private readonly scopes: ScopeCodes,
  ) {}

  /** The records named by members of one index, in order; null where missing or unreadable. */
  async readMembers(members: readonly string[], indexScope: TenantScope | null): Promise<(AuditRecord | null)[]> {
    return this.readRefs(await this.refsOf(members, indexScope));
  }

  /** As readMembers, only what removing each record needs of it (its global members: no index scope). */
  async readRemovable(members: readonly string[]): Promise<(RemovableRecord | null)[]> {
    return this.readRefs(await this.refsOf(members, null), decodeRemovable);
  }

  /** `indexScope` is the scope of a tenant-scope index; null for global members (they carry a scope code). */
  async refsOf(members: readonly string[], indexScope: TenantScope | null): Promise<(RecordRef | null)[]> {
    const scopes = indexScope === null ? await this.scopes.resolve(members.map(memberScopeCode)) : null;
    return members.map((member) => {
      const id = memberRecordId(member);
      const scope = indexScope ?? scopes?.get(memberScopeCode(member));
      return id === null || scope === undefined ? null : { namespace: scope.namespace, tenant: scope.tenant, id };
    });
  }

  readRefs(refs: readonly (RecordRef | null)[]): Promise<(AuditRecord | null)[]>;
  readRefs<T extends RecordRef>(refs: readonly (RecordRef | null)[], decode: (value: string | null) => T | null): Promise<(T | null)[]>;
  async readRefs(refs: readonly (RecordRef | null)[], decode: (value: string | null) => RecordRef | null = decodeRecord): Promise<(RecordRef | null)[]> {
    const present = refs.filter((ref): ref is RecordRef => ref !== null);
    if (present.length === 0) return refs.map(() => null);
    const values = await this.store.getMany(present.map((ref) => recordKey(ref, ref.id)));
    const byRef = new Map<RecordRef, RecordRef | null>();
    present.forEach((ref, i) => {
      byRef.set(ref, decode(values[i] ?? null));
    });
    return refs.map((ref) => {
      const record = ref === null ? null : (byRef.get(ref) ?? null);
      // A value under another record's key (tampering, or a bug) is not the record the index named.
      return record !== null && ref !== null && record.id === ref.id && record.namespace === ref.namespace && record.tenant === ref.tenant ? record : null;
    });
  }
}
