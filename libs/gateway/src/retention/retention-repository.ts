import { errors, newId, type Clock, type RetentionCreateInput, type RetentionPolicy, type RetentionUpdateInput } from '@sluice/core';
import type { StateStore } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import { GenerationSync } from '../sync/generation-sync.js';
import { RetentionIndex } from './retention-index.js';
import { RETENTION_CHANNEL, RETENTION_GENERATION_KEY } from './retention-keys.js';
import { RetentionRecords, type CreateResult } from './retention-records.js';

export interface RetentionRepositoryDeps {
  state: StateStore;
  clock: Clock;
  logger: Logger;
  /** How often the shared generation is polled, as a backstop to pub/sub. */
  syncIntervalMs?: number;
}

export interface RetentionListOptions {
  namespace?: string | undefined;
  tenant?: string | undefined;
  limit: number;
  offset: number;
  /** Keeps only the policies this returns true for (the caller's grants), before counting and paging. */
  visible?: (policy: RetentionPolicy) => boolean;
}

const DEFAULT_SYNC_MS = 5000;
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
  private readonly records: RetentionRecords;
  private readonly log: Logger;
  private readonly sync: GenerationSync;
  /** Reloads may overlap (an edit here, a broadcast, the reaper): only a newer one may replace the snapshot. */
  private loadsStarted = 0;
  private loadInstalled = 0;

  constructor(private readonly deps: RetentionRepositoryDeps) {
    this.records = new RetentionRecords(deps.state);
    this.log = deps.logger.child({ component: 'retention' });
    this.sync = new GenerationSync({
      state: deps.state,
      generationKey: RETENTION_GENERATION_KEY,
      channel: RETENTION_CHANNEL,
      intervalMs: deps.syncIntervalMs ?? DEFAULT_SYNC_MS,
      logger: this.log,
      reload: () => this.reload(),
    });
  }

  get current(): RetentionIndex {
    return this.index;
  }

  /** The exact pair's policy (enabled or not), from the in-memory snapshot: called for every audit record. */
  forScope(namespace: string, tenant: string): RetentionPolicy | undefined {
    return this.index.forScope(namespace, tenant);
  }

  start(): Promise<void> {
    return this.sync.start();
  }

  close(): Promise<void> {
    return this.sync.close();
  }

  /** Re-reads every policy from the shared store (the reaper does so at the start of each cycle). */
  async reload(): Promise<void> {
    const load = ++this.loadsStarted;
    const { policies, bad } = await this.records.readAll();
    for (const pair of bad) this.log.error({ pair }, 'stored retention policy is unreadable; skipped');
    if (load < this.loadInstalled) return; // a reload that started later has already installed newer data
    this.loadInstalled = load;
    this.index = new RetentionIndex(policies);
  }

  list(opts: RetentionListOptions): { policies: RetentionPolicy[]; count: number } {
    const all = this.index
      .list()
      .filter((p) => (opts.namespace === undefined || p.namespace === opts.namespace) && (opts.tenant === undefined || p.tenant === opts.tenant))
      .filter((p) => opts.visible?.(p) ?? true);
    return { policies: all.slice(opts.offset, opts.offset + opts.limit), count: all.length };
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
    await this.sync.announce();
    return policy;
  }

  /** Changes what the patch names; the id and the pair stay. */
  async update(id: string, patch: RetentionUpdateInput): Promise<RetentionPolicy> {
    const updated_at = new Date(this.deps.clock.now()).toISOString();
    const next = await this.records.update(id, (stored) => canonical({ ...stored, ...definedOnly(patch), updated_at }));
    if (!next) throw errors.notFound('retention policy', id);
    await this.sync.announce();
    return next;
  }

  /** The pair reverts to the gateway defaults. */
  async delete(id: string): Promise<void> {
    if (!(await this.records.remove(id))) throw errors.notFound('retention policy', id);
    await this.sync.announce();
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
  return result === 'pair-taken'
    ? errors.conflict(`a retention policy already exists for namespace=${policy.namespace} tenant=${policy.tenant}`)
    : errors.conflict(`retention policy already exists: ${policy.id}`);
}

/** Drops keys whose value is undefined (absent from the patch); null stays, meaning "clear". */
function definedOnly<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;
}
