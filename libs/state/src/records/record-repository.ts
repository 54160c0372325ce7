import type { Clock } from '@sluice/core';
import type { StateStore } from '../state-store.js';
import { RETRY, retryCas } from './cas-retry.js';
import { GenerationSync, type SyncLog } from './generation-sync.js';
import { Claims, UNBOUNDED, type Claim } from './record-claims.js';
import { RecordKeys, globalMember, parseGlobalMember, parseScopeMember, scopeMember, type RecordRef, type RecordScope } from './record-keys.js';

/** What every stored record carries: its id and the tenant scope it lives in (neither ever changes). */
export interface RecordValue {
  id: string;
  namespace: string;
  tenant: string;
}

export interface StoredRecord<T> {
  record: T;
  /** The compare-and-swap version: grows with every write, deletes included. */
  version: number;
}

export type CreateResult = 'created' | 'id-taken' | 'unique-taken' | 'scope-full';

export interface RecordRepositoryOptions<T extends RecordValue> {
  state: StateStore;
  clock: Clock;
  /** Key kind of the records (e.g. `quota-policy`); the kinds of their indexes derive from it. */
  kind: string;
  /** What the records are called in messages ("quota policy"). */
  label: string;
  /** Parses a stored record; null when it no longer fits (reported by listAll as bad). */
  decode(raw: unknown): T | null;
  /** Ids unique across every scope, and find/update/remove by id alone (default: unique within the scope). */
  globalIds?: boolean;
  /** A name at most one live record of a scope holds (e.g. "one policy per namespace and tenant"). */
  uniqueName?: (record: T) => string | undefined;
  /** Most live records one scope may hold. */
  maxPerScope?: number;
  /** Compare-and-swap rounds of update and remove before a 409 (default 8). */
  attempts?: number;
  /** Age after which a claim whose record is not live counts as left by a dead process (default 60 s). */
  staleClaimMs?: number;
  /** How long a deleted record's tombstone keeps its version growing (default 7 days). */
  tombstoneTtlMs?: number;
  /**
   * Replicas keep a copy: `reload` runs on start(), after every write here (before the write
   * returns) and whenever another replica writes (broadcast, with a poll of the generation behind it).
   */
  sync?: { intervalMs: number; log: SyncLog; reload(): Promise<void> };
}

/** What a deleted record leaves: its version keeps growing, so a stale compare-and-swap never matches again. */
const TOMBSTONE = 'deleted';
const DEFAULT_STALE_CLAIM_MS = 60_000;
const DEFAULT_TOMBSTONE_TTL_MS = 7 * 86_400_000;
const LIST_PAGE = 500;

type Read<T> = { kind: 'absent' } | { kind: 'bad' } | { kind: 'live'; stored: StoredRecord<T> };
const ABSENT = { kind: 'absent' } as const;

/**
 * Named records in the StateStore, shared by every replica. A record is a versioned value in its
 * tenant's scope, written only by compare-and-swap: concurrent edits serialize, an update racing
 * a delete can neither resurrect the record nor overwrite the next one created with its id.
 * Uniqueness (of the id, of a name within a scope) and a per-scope maximum are claims, each one
 * atomic bounded add (see record-claims.ts). Records are listed per scope or all at once, in
 * creation order. With `sync`, replicas that watch reload whenever any of them writes.
 *
 * Create order: claims, the global listing, then the record; delete order: tombstone, then the
 * listing and claims. A process dying in between leaves entries without a live record, which
 * readers skip and later claimants evict; never a live record that cannot be found.
 */
export class RecordRepository<T extends RecordValue> {
  readonly keys: RecordKeys;
  private readonly claims: Claims;
  private readonly sync: GenerationSync | null;
  private readonly staleMs: number;

  constructor(private readonly opts: RecordRepositoryOptions<T>) {
    this.keys = new RecordKeys(opts.kind);
    this.staleMs = opts.staleClaimMs ?? DEFAULT_STALE_CLAIM_MS;
    this.claims = new Claims({ state: opts.state, clock: opts.clock, staleMs: this.staleMs, isLive: (ref) => this.isLive(ref) });
    this.sync = opts.sync
      ? new GenerationSync({
          state: opts.state,
          clock: opts.clock,
          generationKey: this.keys.generation,
          channel: opts.kind,
          intervalMs: opts.sync.intervalMs,
          log: opts.sync.log,
          reload: opts.sync.reload,
        })
      : null;
  }

  /** Loads the copy (sync.reload) and follows every replica's writes from now on. */
  async start(): Promise<void> {
    if (!this.sync) throw new Error(`${this.opts.kind} records are not synced: give the repository a sync option`);
    await this.sync.start();
  }

  async close(): Promise<void> {
    await this.sync?.close();
  }

  /**
   * A failure thrown half-way (Redis unreachable) gives nothing back on purpose: the record's
   * compare-and-swap may have landed with only its reply lost, and releasing its claims would
   * hide a live record. What was claimed for nothing is evicted later, as a dead create's is.
   */
  async create(record: T): Promise<CreateResult> {
    const ref = refOf(record);
    const key = this.keys.record(ref);
    const current = await this.opts.state.getVersioned(key);
    if (current && current.value !== TOMBSTONE) return 'id-taken';
    const taken: Claim[] = [];
    const scope = (member: string): RecordRef => ({ namespace: ref.namespace, tenant: ref.tenant, id: member });
    if (this.opts.globalIds) {
      const inScope = (member: string): RecordRef | null => {
        const holder = parseScopeMember(member);
        return holder && { ...holder, id: ref.id };
      };
      if (!(await this.claims.takeOne(this.keys.locator(ref.id), scopeMember(ref), inScope, taken))) return 'id-taken';
    }
    const unique = this.opts.uniqueName?.(record);
    const uniqueKey = unique === undefined ? null : this.keys.unique(ref, unique);
    if (uniqueKey && !(await this.claims.takeOne(uniqueKey, ref.id, scope, taken))) {
      await this.claims.release(taken);
      return 'unique-taken';
    }
    const max = this.opts.maxPerScope ?? UNBOUNDED;
    if ((await this.claims.takeIn(this.keys.scopeIndex(ref), ref.id, max, scope, taken)) === 'full') {
      await this.claims.release(taken);
      return 'scope-full';
    }
    await this.claims.takeIn(this.keys.all, globalMember(ref), UNBOUNDED, parseGlobalMember, taken);
    if ((await this.opts.state.compareAndSwap(key, current?.version ?? 0, JSON.stringify(record))).ok) {
      await this.announce();
      return 'created';
    }
    // Another create of this very id won: its claims are the members this call added, but for a unique name of its own.
    const winner = await this.read(ref);
    await this.claims.release(winner.kind === 'absent' ? taken : taken.filter((c) => c.index === uniqueKey));
    return 'id-taken';
  }

  /** The record in its scope; null when absent, deleted or unreadable. */
  async get(ref: RecordRef): Promise<StoredRecord<T> | null> {
    const found = await this.read(ref);
    return found.kind === 'live' ? found.stored : null;
  }

  /** Where a record of this id lives (ids unique across scopes only). */
  async locate(id: string): Promise<RecordRef | null> {
    if (!this.opts.globalIds) throw new Error(`${this.opts.kind} records are found within their scope only`);
    const [holder] = await this.opts.state.indexRange(this.keys.locator(id), { limit: 1 });
    const scope = holder ? parseScopeMember(holder.member) : null;
    return scope && { ...scope, id };
  }

  /** The record of an id, whatever its scope (ids unique across scopes only). */
  async find(id: string): Promise<StoredRecord<T> | null> {
    const ref = await this.locate(id);
    return ref ? this.get(ref) : null;
  }

  /** One scope's records in creation order, paged; `total` counts the scope's listing entries. */
  async list(scope: RecordScope, page: { offset?: number; limit?: number } = {}): Promise<{ records: StoredRecord<T>[]; total: number }> {
    const index = this.keys.scopeIndex(scope);
    const [entries, total] = await Promise.all([
      this.opts.state.indexRange(index, { offset: page.offset ?? 0, limit: page.limit ?? this.opts.maxPerScope ?? LIST_PAGE }),
      this.opts.state.indexCount(index),
    ]);
    const found = await Promise.all(entries.map((e) => this.get({ ...scope, id: e.member })));
    return { records: found.filter((f): f is StoredRecord<T> => f !== null), total };
  }

  /** Every live record in creation order; `bad` names those that no longer decode. Drops listing entries left by dead processes. */
  async listAll(): Promise<{ records: StoredRecord<T>[]; bad: RecordRef[] }> {
    const records: StoredRecord<T>[] = [];
    const bad: RecordRef[] = [];
    for (let offset = 0; ; offset += LIST_PAGE) {
      const entries = await this.opts.state.indexRange(this.keys.all, { offset, limit: LIST_PAGE });
      const reads = await Promise.all(
        entries.map(async (entry) => {
          const ref = parseGlobalMember(entry.member);
          return { entry, ref, found: ref ? await this.read(ref) : ABSENT };
        }),
      );
      for (const { entry, ref, found } of reads) {
        if (found.kind === 'live') records.push(found.stored);
        else if (found.kind === 'bad' && ref) bad.push(ref);
        else if (await this.claims.isLeftover(entry, parseGlobalMember)) await this.opts.state.indexRemove(this.keys.all, entry.member);
      }
      if (entries.length < LIST_PAGE) return { records, bad };
    }
  }

  /**
   * Applies `change` by compare-and-swap, reading again after a concurrent write; `change` may
   * throw (a 409 for an invalid move). Null when the record does not exist. An id alone is
   * looked up first (ids unique across scopes only).
   */
  async update(target: RecordRef | string, change: (record: T) => T): Promise<StoredRecord<T> | null> {
    const ref = await this.resolve(target);
    if (!ref) return null;
    const updated = await retryCas({ what: `${this.opts.label} ${ref.id}`, attempts: this.opts.attempts }, async () => {
      const stored = await this.get(ref);
      if (!stored) return null;
      const next = change(stored.record);
      assertSameRef(ref, next);
      const cas = await this.opts.state.compareAndSwap(this.keys.record(ref), stored.version, JSON.stringify(next));
      return cas.ok ? { record: next, version: cas.version } : RETRY;
    });
    if (updated) await this.announce();
    return updated;
  }

  /** One compare-and-swap from `version` (a claim, like an occurrence's); false when anything else wrote first. */
  async swap(record: T, version: number): Promise<StoredRecord<T> | null> {
    const cas = await this.opts.state.compareAndSwap(this.keys.record(refOf(record)), version, JSON.stringify(record));
    if (!cas.ok) return null;
    await this.announce();
    return { record, version: cas.version };
  }

  /** True when this call deleted the record (an unreadable one included). Its claims are given back after the tombstone. */
  async remove(target: RecordRef | string): Promise<boolean> {
    const ref = await this.resolve(target);
    if (!ref) return false;
    const key = this.keys.record(ref);
    const deleted = await retryCas({ what: `${this.opts.label} ${ref.id}`, attempts: this.opts.attempts }, async () => {
      const current = await this.opts.state.getVersioned(key);
      if (!current || current.value === TOMBSTONE) return null;
      const cas = await this.opts.state.compareAndSwap(key, current.version, TOMBSTONE, { ttlMs: this.opts.tombstoneTtlMs ?? DEFAULT_TOMBSTONE_TTL_MS });
      return cas.ok ? { record: this.decode(current.value) } : RETRY;
    });
    if (!deleted) return false;
    const { state } = this.opts;
    await state.indexRemove(this.keys.all, globalMember(ref));
    const unique = deleted.record ? this.opts.uniqueName?.(deleted.record) : undefined;
    if (unique !== undefined) await state.indexRemove(this.keys.unique(ref, unique), ref.id);
    await state.indexRemove(this.keys.scopeIndex(ref), ref.id);
    // The id is given back last: until then no create can take it over a half-released record.
    if (this.opts.globalIds) await state.indexRemove(this.keys.locator(ref.id), scopeMember(ref));
    await this.announce();
    return true;
  }

  private async resolve(target: RecordRef | string): Promise<RecordRef | null> {
    return typeof target === 'string' ? this.locate(target) : target;
  }

  private async isLive(ref: RecordRef): Promise<boolean> {
    const current = await this.opts.state.getVersioned(this.keys.record(ref));
    return current !== null && current.value !== TOMBSTONE;
  }

  private async read(ref: RecordRef): Promise<Read<T>> {
    const current = await this.opts.state.getVersioned(this.keys.record(ref));
    if (!current || current.value === TOMBSTONE) return ABSENT;
    const record = this.decode(current.value);
    // A record stored under another ref than its own fields say is as unreadable as broken JSON.
    if (!record || record.id !== ref.id || record.namespace !== ref.namespace || record.tenant !== ref.tenant) return { kind: 'bad' };
    return { kind: 'live', stored: { record, version: current.version } };
  }

  private decode(raw: string): T | null {
    try {
      return this.opts.decode(JSON.parse(raw) as unknown);
    } catch {
      return null;
    }
  }

  private async announce(): Promise<void> {
    await this.sync?.announce();
  }
}

function refOf(record: RecordValue): RecordRef {
  return { namespace: record.namespace, tenant: record.tenant, id: record.id };
}

function assertSameRef(ref: RecordRef, record: RecordValue): void {
  if (record.id !== ref.id || record.namespace !== ref.namespace || record.tenant !== ref.tenant) {
    throw new Error(`a record's id, namespace and tenant never change (${JSON.stringify(ref)})`);
  }
}
