import { errors, newId, type Clock, type RetentionCreateInput, type RetentionPolicy, type RetentionUpdateInput } from '@sluice/core';
import type { CreateResult, RecordRepository, StateStore } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import { definedOnly } from '../policies/defined-only.js';
import { pagePolicies, type PolicyListOptions } from '../policies/policy-listing.js';
import { RetentionIndex } from './retention-index.js';
import { retentionRecords } from './retention-records.js';

export interface RetentionRepositoryDeps {
  state: StateStore;
  clock: Clock;
  logger: Logger;
  /** How often the shared generation is polled, as a backstop to pub/sub. */
  syncIntervalMs?: number;
}

export type RetentionListOptions = PolicyListOptions<RetentionPolicy>;

const WILDCARD = '*';

/** A policy's fields with the optional ones possibly null (cleared) or undefined (unset). */
type PolicyFields = Omit<RetentionPolicy, 'audit_ttl_seconds' | 'state_ttl_seconds' | 'event_ttl_seconds' | 'description' | 'labels'> & {
  audit_ttl_seconds?: number | null | undefined;
  state_ttl_seconds?: number | null | undefined;
  event_ttl_seconds?: number | null | undefined;
  description?: string | null | undefined;
  labels?: Record<string, string> | null | undefined;
};

/**
 * The retention policies of the gateway, shared by every replica through the StateStore. Every
 * API edit bumps a shared generation and is broadcast, so every replica reloads at once (a poll
 * of the generation backs up a lost message). Reads come from an immutable snapshot swapped
 * whole, so the dispatch path looks a policy up synchronously, without a round trip.
 */
export class RetentionRepository {
  private index = new RetentionIndex([]);
  private readonly records: RecordRepository<RetentionPolicy>;
  private readonly log: Logger;
  /** Reloads may overlap (an edit here, a broadcast, the reaper): only a newer one may replace the snapshot. */
  private loadsStarted = 0;
  private loadInstalled = 0;

  constructor(private readonly deps: RetentionRepositoryDeps) {
    this.log = deps.logger.child({ component: 'retention' });
    this.records = retentionRecords({ state: deps.state, clock: deps.clock, log: this.log, syncIntervalMs: deps.syncIntervalMs, reload: () => this.reload() });
  }

  get current(): RetentionIndex {
    return this.index;
  }

  /** The exact pair's policy (enabled or not), from the in-memory snapshot: called for every audit record. */
  forScope(namespace: string, tenant: string): RetentionPolicy | undefined {
    return this.index.forScope(namespace, tenant);
  }

  start(): Promise<void> {
    return this.records.start();
  }

  close(): Promise<void> {
    return this.records.close();
  }

  /** Re-reads every policy from the shared store (the reaper does so at the start of each cycle). */
  async reload(): Promise<void> {
    const load = ++this.loadsStarted;
    const { records, bad } = await this.records.listAll();
    for (const ref of bad) this.log.error({ policy: ref.id, namespace: ref.namespace, tenant: ref.tenant }, 'stored retention policy is unreadable; skipped');
    if (load < this.loadInstalled) return; // a reload that started later has already installed newer data
    this.loadInstalled = load;
    this.index = new RetentionIndex(records.map((r) => r.record));
  }

  list(opts: RetentionListOptions): { policies: RetentionPolicy[]; count: number } {
    const { items, count } = pagePolicies(this.index.list(), opts);
    return { policies: items, count };
  }

  get(id: string): RetentionPolicy {
    const policy = this.index.get(id);
    if (!policy) throw errors.notFound('retention policy', id);
    return policy;
  }

  /** 409 when the (namespace, tenant) pair already has a policy, whichever replica created it. */
  async create(input: RetentionCreateInput): Promise<RetentionPolicy> {
    if (input.namespace === WILDCARD || input.tenant === WILDCARD) {
      throw errors.badRequest('a retention policy names one exact namespace and tenant; * is not a wildcard here');
    }
    const now = new Date(this.deps.clock.now()).toISOString();
    const policy = canonical({ ...input, id: newId(), enabled: true, created_at: now, updated_at: now });
    const result = await this.records.create(policy);
    if (result !== 'created') throw conflictWith(policy, result);
    return policy;
  }

  /** Changes what the patch names; the id and the pair stay. */
  async update(id: string, patch: RetentionUpdateInput): Promise<RetentionPolicy> {
    const updated_at = new Date(this.deps.clock.now()).toISOString();
    const next = await this.records.update(id, (stored) => canonical({ ...stored, ...definedOnly(patch), updated_at }));
    if (!next) throw errors.notFound('retention policy', id);
    return next.record;
  }

  /** The pair reverts to the gateway defaults. */
  async delete(id: string): Promise<void> {
    if (!(await this.records.remove(id))) throw errors.notFound('retention policy', id);
  }
}

/** The stored and returned form: fixed field order, unset optional fields omitted, empty labels omitted. */
function canonical(f: PolicyFields): RetentionPolicy {
  return {
    id: f.id,
    namespace: f.namespace,
    tenant: f.tenant,
    enabled: f.enabled,
    ...(f.audit_ttl_seconds != null ? { audit_ttl_seconds: f.audit_ttl_seconds } : {}),
    ...(f.state_ttl_seconds != null ? { state_ttl_seconds: f.state_ttl_seconds } : {}),
    ...(f.event_ttl_seconds != null ? { event_ttl_seconds: f.event_ttl_seconds } : {}),
    compliance_hold: f.compliance_hold,
    created_at: f.created_at,
    updated_at: f.updated_at,
    ...(f.description != null ? { description: f.description } : {}),
    ...(f.labels && Object.keys(f.labels).length > 0 ? { labels: f.labels } : {}),
  };
}

function conflictWith(policy: RetentionPolicy, result: Exclude<CreateResult, 'created'>) {
  return result === 'unique-taken'
    ? errors.conflict(`a retention policy already exists for namespace=${policy.namespace} tenant=${policy.tenant}`)
    : errors.conflict(`retention policy already exists: ${policy.id}`);
}
