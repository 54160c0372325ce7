import { errors, newId, type Clock, type QuotaCreateInput, type QuotaPolicy, type QuotaUpdateInput, type QuotaUsage } from '@sluice/core';
import type { StateStore } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import { readQuota } from './quota-counter.js';
import { QUOTA_WILDCARD, QuotaIndex } from './quota-index.js';
import { QUOTAS_CHANNEL, QUOTAS_GENERATION_KEY, scopeId } from './quota-keys.js';
import { QuotaRecords } from './quota-records.js';
import { GenerationSync } from '../sync/generation-sync.js';

export interface QuotaRepositoryDeps {
  state: StateStore;
  clock: Clock;
  logger: Logger;
  /** Config policies, already checked by configQuotaPolicies(). */
  policies: readonly QuotaPolicy[];
  /** How often the shared generation is polled, as a backstop to pub/sub. */
  syncIntervalMs?: number;
}

export interface QuotaListOptions {
  namespace?: string | undefined;
  tenant?: string | undefined;
  limit: number;
  offset: number;
  /** Keeps only the policies this returns true for (the caller's grants), before counting and paging. */
  visible?: (policy: QuotaPolicy) => boolean;
}

const DEFAULT_SYNC_MS = 5000;

/**
 * The quota policies one replica enforces: config policies (read-only through the API) plus API
 * policies shared through the StateStore. Every API edit bumps a shared generation and is
 * broadcast, so every replica reloads at once; a poll of the generation backs up a lost message.
 * Reads come from an immutable snapshot swapped whole, so a dispatch never sees half a reload.
 */
export class QuotaRepository {
  private index: QuotaIndex;
  private readonly records: QuotaRecords;
  private readonly log: Logger;
  private readonly sync: GenerationSync;

  constructor(private readonly deps: QuotaRepositoryDeps) {
    this.index = new QuotaIndex(deps.policies);
    this.records = new QuotaRecords(deps.state);
    this.log = deps.logger.child({ component: 'quotas' });
    this.sync = new GenerationSync({
      state: deps.state,
      generationKey: QUOTAS_GENERATION_KEY,
      channel: QUOTAS_CHANNEL,
      intervalMs: deps.syncIntervalMs ?? DEFAULT_SYNC_MS,
      logger: this.log,
      reload: () => this.refresh(),
    });
  }

  get current(): QuotaIndex {
    return this.index;
  }

  /** The policy governing an action's namespace and tenant, if any (the quota stage's question). */
  match(namespace: string, tenant: string): QuotaPolicy | undefined {
    return this.index.match(namespace, tenant);
  }

  start(): Promise<void> {
    return this.sync.start();
  }

  close(): Promise<void> {
    return this.sync.close();
  }

  list(opts: QuotaListOptions): { quotas: QuotaPolicy[]; count: number } {
    const all = this.index
      .list()
      .filter((p) => (opts.namespace === undefined || p.namespace === opts.namespace) && (opts.tenant === undefined || p.tenant === opts.tenant))
      .filter((p) => opts.visible?.(p) ?? true);
    return { quotas: all.slice(opts.offset, opts.offset + opts.limit), count: all.length };
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
    const configured = this.deps.policies.find((p) => p.id === policy.id || scopeId(p.namespace, p.tenant) === scopeId(policy.namespace, policy.tenant));
    if (configured) throw conflictWith(policy, configured.id === policy.id ? 'id-taken' : 'scope-taken');
    const result = await this.records.create(policy);
    if (result !== 'created') throw conflictWith(policy, result);
    await this.sync.announce();
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
    await this.sync.announce();
    return next;
  }

  async delete(id: string): Promise<void> {
    this.refuseConfigPolicy(id, 'deleted');
    if (!(await this.records.remove(id))) throw errors.notFound('quota policy', id);
    await this.sync.announce();
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
    const { policies, bad } = await this.records.readAll();
    for (const scope of bad) this.log.error({ scope }, 'stored quota policy is unreadable; skipped');
    const ids = new Set(this.deps.policies.map((p) => p.id));
    const scopes = new Set(this.deps.policies.map((p) => scopeId(p.namespace, p.tenant)));
    const api: QuotaPolicy[] = [];
    for (const p of policies.sort((a, b) => (a.created_at ?? '').localeCompare(b.created_at ?? ''))) {
      if (ids.has(p.id) || scopes.has(scopeId(p.namespace, p.tenant))) {
        this.log.warn({ policy: p.id, namespace: p.namespace, tenant: p.tenant }, 'API quota policy shadowed by a config policy; ignored');
        continue;
      }
      ids.add(p.id);
      api.push(p);
    }
    this.index = new QuotaIndex([...this.deps.policies, ...api]);
  }
}

function conflictWith(policy: QuotaPolicy, result: 'id-taken' | 'scope-taken') {
  return result === 'id-taken'
    ? errors.conflict(`quota policy already exists: ${policy.id}`)
    : errors.conflict(`a quota policy already exists for namespace ${policy.namespace}, tenant ${policy.tenant}`);
}

function concrete(policy: QuotaPolicy, field: 'namespace' | 'tenant', given: string | undefined): string {
  if (policy[field] !== QUOTA_WILDCARD) {
    if (given !== undefined && given !== policy[field]) throw errors.badRequest(`quota policy ${policy.id} applies to ${field} ${policy[field]}, not ${given}`);
    return policy[field];
  }
  if (given === undefined) throw errors.badRequest(`quota policy ${policy.id} counts each ${field} separately: name one with ?${field}=`);
  return given;
}

/** Drops keys whose value is undefined, so a partial update never blanks a field. */
function definedOnly<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;
}
