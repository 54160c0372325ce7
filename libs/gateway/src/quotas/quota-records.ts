import { QuotaPolicy, errors } from '@sluice/core';
import type { StateStore } from '@sluice/state';
import { readAllGlobal } from '../rules/shared-rules.js';
import { ID_KIND, policyIdKey, policyKey, scopeId } from './quota-keys.js';

export type CreateResult = 'created' | 'id-taken' | 'scope-taken';

/** What a deleted policy leaves in its pair's record: versions keep growing, so a stale CAS can never match again. */
const TOMBSTONE = 'deleted';
const MAX_ATTEMPTS = 5;

interface Found {
  policy: QuotaPolicy;
  version: number;
  scope: string;
}

/**
 * API-created quota policies in the StateStore, shared by every replica. A policy's record is a
 * versioned value under its (namespace, tenant) pair, written only by compare-and-swap, and its
 * id is reserved by a plain key (set-if-absent) that also lists it. So two creates can never both
 * win a pair or an id, and an update racing a delete can neither resurrect the policy nor
 * overwrite the next policy created for the pair.
 */
export class QuotaRecords {
  constructor(private readonly state: StateStore) {}

  /** Every stored policy; `bad` names records that no longer parse (skipped). */
  async readAll(): Promise<{ policies: QuotaPolicy[]; bad: string[] }> {
    const ids = await readAllGlobal(this.state, ID_KIND);
    const loaded = await Promise.all([...ids].map(async ([id, scope]) => ({ id, scope, record: await this.state.getVersioned(policyKey(scope)) })));
    const policies: QuotaPolicy[] = [];
    const bad: string[] = [];
    for (const { id, scope, record } of loaded) {
      // No record (yet) or another policy's: a create in flight or a reservation left by a crash.
      if (!record || record.value === TOMBSTONE) continue;
      const policy = decode(record.value);
      if (!policy) bad.push(scope);
      else if (policy.id === id) policies.push(policy);
    }
    return { policies, bad };
  }

  async read(id: string): Promise<QuotaPolicy | null> {
    return (await this.find(id))?.policy ?? null;
  }

  async create(policy: QuotaPolicy): Promise<CreateResult> {
    const scope = scopeId(policy.namespace, policy.tenant);
    if (!(await this.state.setIfAbsent(policyIdKey(policy.id), scope))) return 'id-taken';
    const current = await this.state.getVersioned(policyKey(scope));
    const free = !current || current.value === TOMBSTONE;
    if (free && (await this.state.compareAndSwap(policyKey(scope), current?.version ?? 0, JSON.stringify(policy))).ok) return 'created';
    // The pair is taken: give back the id reserved a moment ago (only this call holds it).
    await this.state.delete(policyIdKey(policy.id));
    return 'scope-taken';
  }

  /** Applies `change` to the stored policy by compare-and-swap, re-reading on a concurrent edit. Null when it does not exist. */
  async update(id: string, change: (policy: QuotaPolicy) => QuotaPolicy): Promise<QuotaPolicy | null> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const found = await this.find(id);
      if (!found) return null;
      const next = change(found.policy);
      if ((await this.state.compareAndSwap(policyKey(found.scope), found.version, JSON.stringify(next))).ok) return next;
    }
    throw errors.conflict(`quota policy ${id} is being changed concurrently; retry`);
  }

  /** True when this call deleted the policy. The id is released only after the record is gone. */
  async remove(id: string): Promise<boolean> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const found = await this.find(id);
      if (!found) return false;
      if ((await this.state.compareAndSwap(policyKey(found.scope), found.version, TOMBSTONE)).ok) {
        await this.state.delete(policyIdKey(id));
        return true;
      }
    }
    throw errors.conflict(`quota policy ${id} is being changed concurrently; retry`);
  }

  private async find(id: string): Promise<Found | null> {
    const scope = await this.state.get(policyIdKey(id));
    if (scope === null) return null;
    const record = await this.state.getVersioned(policyKey(scope));
    const policy = record && record.value !== TOMBSTONE ? decode(record.value) : null;
    return record && policy?.id === id ? { policy, version: record.version, scope } : null;
  }
}

function decode(raw: string): QuotaPolicy | null {
  try {
    const parsed = QuotaPolicy.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
