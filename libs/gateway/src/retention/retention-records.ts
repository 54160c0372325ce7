import { RetentionPolicy, errors } from '@sluice/core';
import type { StateStore } from '@sluice/state';
import { readAllGlobal } from '../rules/shared-rules.js';
import { RETENTION_ID_KIND, pairId, policyIdKey, policyKey } from './retention-keys.js';

export type CreateResult = 'created' | 'id-taken' | 'pair-taken';

/** What a deleted policy leaves in its pair's record: versions keep growing, so a stale CAS can never match again. */
const TOMBSTONE = 'deleted';
const MAX_ATTEMPTS = 5;

interface Found {
  policy: RetentionPolicy;
  version: number;
  pair: string;
}

/**
 * Retention policies in the StateStore, shared by every replica. A policy's record is a
 * versioned value under its (namespace, tenant) pair, written only by compare-and-swap, and its
 * id is reserved by a plain key (set-if-absent) that also lists it. So two creates on two
 * replicas can never both win a pair, and an update racing a delete can neither resurrect the
 * policy nor overwrite the next policy created for the pair.
 */
export class RetentionRecords {
  constructor(private readonly state: StateStore) {}

  /** Every stored policy; `bad` names pairs whose record no longer parses (skipped). */
  async readAll(): Promise<{ policies: RetentionPolicy[]; bad: string[] }> {
    const ids = await readAllGlobal(this.state, RETENTION_ID_KIND);
    const loaded = await Promise.all([...ids].map(async ([id, pair]) => ({ id, pair, record: await this.state.getVersioned(policyKey(pair)) })));
    const policies: RetentionPolicy[] = [];
    const bad: string[] = [];
    for (const { id, pair, record } of loaded) {
      // No record (yet) or another policy's: a create in flight or a reservation left by a crash.
      if (!record || record.value === TOMBSTONE) continue;
      const policy = decode(record.value);
      if (!policy) bad.push(pair);
      else if (policy.id === id) policies.push(policy);
    }
    return { policies, bad };
  }

  async read(id: string): Promise<RetentionPolicy | null> {
    return (await this.find(id))?.policy ?? null;
  }

  async create(policy: RetentionPolicy): Promise<CreateResult> {
    const pair = pairId(policy.namespace, policy.tenant);
    if (!(await this.state.setIfAbsent(policyIdKey(policy.id), pair))) return 'id-taken';
    const current = await this.state.getVersioned(policyKey(pair));
    const free = !current || current.value === TOMBSTONE;
    if (free && (await this.state.compareAndSwap(policyKey(pair), current?.version ?? 0, JSON.stringify(policy))).ok) return 'created';
    // The pair is taken: give back the id reserved a moment ago (only this call holds it).
    await this.state.delete(policyIdKey(policy.id));
    return 'pair-taken';
  }

  /** Applies `change` to the stored policy by compare-and-swap, re-reading on a concurrent edit. Null when it does not exist. */
  async update(id: string, change: (policy: RetentionPolicy) => RetentionPolicy): Promise<RetentionPolicy | null> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const found = await this.find(id);
      if (!found) return null;
      const next = change(found.policy);
      if ((await this.state.compareAndSwap(policyKey(found.pair), found.version, JSON.stringify(next))).ok) return next;
    }
    throw errors.conflict(`retention policy ${id} is being changed concurrently; retry`);
  }

  /** True when this call deleted the policy. The id is released only after the record is gone. */
  async remove(id: string): Promise<boolean> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const found = await this.find(id);
      if (!found) return false;
      if ((await this.state.compareAndSwap(policyKey(found.pair), found.version, TOMBSTONE)).ok) {
        await this.state.delete(policyIdKey(id));
        return true;
      }
    }
    throw errors.conflict(`retention policy ${id} is being changed concurrently; retry`);
  }

  private async find(id: string): Promise<Found | null> {
    const pair = await this.state.get(policyIdKey(id));
    if (pair === null) return null;
    const record = await this.state.getVersioned(policyKey(pair));
    const policy = record && record.value !== TOMBSTONE ? decode(record.value) : null;
    return record && policy?.id === id ? { policy, version: record.version, pair } : null;
  }
}

function decode(raw: string): RetentionPolicy | null {
  try {
    const parsed = RetentionPolicy.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
