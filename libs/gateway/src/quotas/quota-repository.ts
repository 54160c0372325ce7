import { errors, newId, type Clock, type QuotaCreateInput, type QuotaPolicy, type QuotaUpdateInput, type QuotaUsage } from '@sluice/core';
import { scopeMember, type CreateResult, type RecordRepository, type StateStore } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import { definedOnly } from '../policies/defined-only.js';
import { pagePolicies, type PolicyListOptions } from '../policies/policy-listing.js';
import { readQuota } from './quota-counter.js';
import { QUOTA_WILDCARD, QuotaIndex } from './quota-index.js';
import { quotaRecords } from './quota-records.js';

export interface QuotaRepositoryDeps {
  state: StateStore;
  clock: Clock;
  logger: Logger;
  /** Config policies, already checked by configQuotaPolicies(). */
  policies: readonly QuotaPolicy[];
  /** How often the shared generation is polled, as a backstop to pub/sub. */
  syncIntervalMs?: number;
}

export type QuotaListOptions = PolicyListOptions<QuotaPolicy>;

/**
 * The quota policies one replica enforces: config policies (read-only through the API) plus API
 * policies shared through the StateStore. Every API edit bumps a shared generation and is
 * broadcast, so every replica reloads at once; a poll of the generation backs up a lost message.
 * Reads come from an immutable snapshot swapped whole, so a dispatch never sees half a reload.
 */
export class QuotaRepository {
  private index: QuotaIndex;
  private readonly records: RecordRepository<QuotaPolicy>;
  private readonly log: Logger;

  constructor(private readonly deps: QuotaRepositoryDeps) {
    this.index = new QuotaIndex(deps.policies);
    this.log = deps.logger.child({ component: 'quotas' });
    this.records = quotaRecords({ state: deps.state, clock: deps.clock, log: this.log, syncIntervalMs: deps.syncIntervalMs, reload: () => this.refresh() });
  }

  get current(): QuotaIndex {
    return this.index;
  }

  /** The policy governing an action's namespace and tenant, if any (the quota stage's question). */
  match(namespace: string, tenant: string): QuotaPolicy | undefined {
    return this.index.match(namespace, tenant);
  }

  start(): Promise<void> {
    return this.records.start();
  }

  close(): Promise<void> {
    return this.records.close();
  }

  list(opts: QuotaListOptions): { quotas: QuotaPolicy[]; count: number } {
    const { items, count } = pagePolicies(this.index.list(), opts);
    return { quotas: items, count };
  }

  get(id: string): QuotaPolicy {
    const policy = this.index.get(id);
    if (!policy) throw errors.notFound('quota policy', id);
    return policy;
  }

  /** 409 when the id or the (namespace, tenant) pair already has a policy, from config or the API. */
  async create(input: QuotaCreateInput): Promise<QuotaPolicy> {
    const now = new Date(this.deps.clock.now()).toISOString();
    const policy: QuotaPolicy = {
      id: input.id ?? newId(),
      namespace: input.namespace,
      tenant: input.tenant,
      max_actions: input.max_actions,
      window: input.window,
      overage_behavior: input.overage_behavior,
      enabled: input.enabled,
      ...(input.description !== undefined ? { description: input.description } : {}),
      source: 'api',
      created_at: now,
      updated_at: now,
    };
    const configured = this.deps.policies.find((p) => p.id === policy.id || scopeMember(p) === scopeMember(policy));
    if (configured) throw conflictWith(policy, configured.id === policy.id ? 'id-taken' : 'unique-taken');
    const result = await this.records.create(policy);
    if (result !== 'created') throw conflictWith(policy, result);
    return policy;
  }

  /** Changes limit, window, behaviour, enabled or description; the id and scope stay. */
  async update(id: string, patch: QuotaUpdateInput): Promise<QuotaPolicy> {
    this.refuseConfigPolicy(id, 'changed');
    const { description, ...fields } = patch;
    const updated_at = new Date(this.deps.clock.now()).toISOString();
    const next = await this.records.update(id, (stored) => {
      const { description: old, ...rest } = stored;
      const keep = description === undefined ? old : (description ?? undefined);
      return { ...rest, ...definedOnly(fields), ...(keep !== undefined ? { description: keep } : {}), updated_at };
    });
    if (!next) throw errors.notFound('quota policy', id);
    return next.record;
  }

  async delete(id: string): Promise<void> {
    this.refuseConfigPolicy(id, 'deleted');
    if (!(await this.records.remove(id))) throw errors.notFound('quota policy', id);
  }

  /**
   * The current window's count for one tenant. A `*` policy counts each namespace/tenant
   * separately, so the caller names the concrete ones; an exact one may be repeated or omitted.
   */
  async usage(id: string, scope: { namespace?: string | undefined; tenant?: string | undefined }): Promise<QuotaUsage> {
    const policy = this.get(id);
    const namespace = concrete(policy, 'namespace', scope.namespace);
    const tenant = concrete(policy, 'tenant', scope.tenant);
    const { used, endMs } = await readQuota(this.deps.state, policy, namespace, tenant, this.deps.clock.now());
    return {
      id: policy.id,
      namespace,
      tenant,
      used,
      limit: policy.max_actions,
      remaining: Math.max(0, policy.max_actions - used),
      window: policy.window,
      resets_at: new Date(endMs).toISOString(),
      overage_behavior: policy.overage_behavior,
    };
  }

  private refuseConfigPolicy(id: string, verb: string): void {
    if (this.deps.policies.some((p) => p.id === id)) {
      throw errors.conflict(`quota policy ${id} is defined in the configuration file and cannot be ${verb} through the API`);
    }
  }

  /** Rebuilds the snapshot. A config policy wins over an API policy with its id or pair (config may change after the API wrote). */
  private async refresh(): Promise<void> {
    const { records, bad } = await this.records.listAll();
    for (const ref of bad) this.log.error({ policy: ref.id, namespace: ref.namespace, tenant: ref.tenant }, 'stored quota policy is unreadable; skipped');
    const ids = new Set(this.deps.policies.map((p) => p.id));
    const scopes = new Set(this.deps.policies.map((p) => scopeMember(p)));
    const api: QuotaPolicy[] = [];
    for (const { record: p } of records.sort((a, b) => (a.record.created_at ?? '').localeCompare(b.record.created_at ?? ''))) {
      if (ids.has(p.id) || scopes.has(scopeMember(p))) {
        this.log.warn({ policy: p.id, namespace: p.namespace, tenant: p.tenant }, 'API quota policy shadowed by a config policy; ignored');
        continue;
      }
      ids.add(p.id);
      api.push(p);
    }
    this.index = new QuotaIndex([...this.deps.policies, ...api]);
  }
}

function conflictWith(policy: QuotaPolicy, result: Exclude<CreateResult, 'created'>) {
  return result === 'unique-taken'
    ? errors.conflict(`a quota policy already exists for namespace ${policy.namespace}, tenant ${policy.tenant}`)
    : errors.conflict(`quota policy already exists: ${policy.id}`);
}

function concrete(policy: QuotaPolicy, field: 'namespace' | 'tenant', given: string | undefined): string {
  if (policy[field] !== QUOTA_WILDCARD) {
    if (given !== undefined && given !== policy[field]) throw errors.badRequest(`quota policy ${policy.id} applies to ${field} ${policy[field]}, not ${given}`);
    return policy[field];
  }
  if (given === undefined) throw errors.badRequest(`quota policy ${policy.id} counts each ${field} separately: name one with ?${field}=`);
  return given;
}
