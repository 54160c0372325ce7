import type { Clock } from '@sluice/core';
import type { IndexEntry, StateStore } from '../state-store.js';
import { RETRY, retryCas } from './cas-retry.js';
import { GenerationSync, type SyncLog } from './generation-sync.js';
import { Claims, UNBOUNDED, type Claim, type HolderOf } from './record-claims.js';
import { RecordKeys, globalMember, parseGlobalMember, parseScopeMember, scopeMember, type RecordRef, type RecordScope } from './record-keys.js';
import { TOMBSTONE, decodeStored, encodeStored, type ClaimScores } from './stored-form.js';

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
  /** The scores of the claims its create took; kept so its delete gives back exactly those. */
  claims: ClaimScores;
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

const DEFAULT_STALE_CLAIM_MS = 60_000;
const DEFAULT_TOMBSTONE_TTL_MS = 7 * 86_400_000;
const LIST_PAGE = 500;

type Read<T> = { kind: 'absent'; version: number } | { kind: 'bad'; version: number } | { kind: 'live'; stored: StoredRecord<T> };

/**
 * Named records in the StateStore, shared by every replica. A record is a versioned value in its
 * tenant's scope, written only by compare-and-swap: concurrent edits serialize, an update racing
 * a delete can neither resurrect the record nor overwrite the next one created with its id.
 * The id, a unique name within a scope and a per-scope maximum are claims, each one atomic
 * bounded add (see record-claims.ts). Records are listed per scope or all at once, in creation
 * order. With `sync`, replicas that keep a copy reload whenever any of them writes.
 *
 * Create takes its claims (the id first), then writes the record; delete writes a tombstone,
 * then gives back exactly the claims the create took. A process dying in between leaves claims
 * without a live record: readers skip them, and the next claimant evicts them once they are old,
 * fencing the record first so that a create presumed dead can never complete afterwards.
 */
export class RecordRepository<T extends RecordValue> {
  readonly keys: RecordKeys;
  private readonly claims: Claims;
  private readonly sync: GenerationSync | null;
  private readonly tombstoneTtlMs: number;

  constructor(private readonly opts: RecordRepositoryOptions<T>) {
    this.keys = new RecordKeys(opts.kind);
    this.tombstoneTtlMs = opts.tombstoneTtlMs ?? DEFAULT_TOMBSTONE_TTL_MS;
    this.claims = new Claims({
      state: opts.state,
      clock: opts.clock,
      staleMs: opts.staleClaimMs ?? DEFAULT_STALE_CLAIM_MS,
      letGo: (ref) => this.letGo(ref),
    });
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
    if ((await this.read(ref)).kind !== 'absent') return 'id-taken';
    const inScope: HolderOf = (member) => ({ namespace: ref.namespace, tenant: ref.tenant, id: member });
    const [idKey, idMember, idHolder] = this.idClaim(ref);
    const id = await this.claims.takeOne(idKey, idMember, idHolder);
    if (!id) return 'id-taken';
    // Read once the id is this call's alone (taking it may have fenced off a dead create of the same record).
    const current = await this.read(ref);
    if (current.kind !== 'absent') {
      await this.claims.release([id]);
      return 'id-taken';
    }
    const unique = this.opts.uniqueName?.(record);
    const uniqueClaim = unique === undefined ? null : await this.claims.takeOne(this.keys.unique(ref, unique), ref.id, inScope, ref);
    if (unique !== undefined && !uniqueClaim) {
      await this.claims.release([id]);
      return 'unique-taken';
    }
    const taken = uniqueClaim ? [id, uniqueClaim] : [id];
    const scope = await this.claims.takeIn(this.keys.scopeIndex(ref), ref.id, this.opts.maxPerScope ?? UNBOUNDED, inScope);
    if (scope === 'full') {
      await this.claims.release(taken);
      return 'scope-full';
    }
    const all = await this.claims.takeIn(this.keys.all, globalMember(ref), UNBOUNDED, parseGlobalMember);
    taken.push(scope, ...(all === 'full' ? [] : [all]));
    const scores: ClaimScores = { id: id.score, unique: uniqueClaim?.score ?? null, scope: scope.score, all: all === 'full' ? 0 : all.score };
    if ((await this.opts.state.compareAndSwap(this.keys.record(ref), current.version, encodeStored(record, scores))).ok) {
      await this.announce();
      return 'created';
    }
    // This create was presumed dead and fenced off: its claims, where still its own, go back.
    await this.claims.release(taken);
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
    const [holder] = await this.opts.state.indexRange(this.keys.idClaim({ namespace: '', tenant: '', id }, true), { limit: 1 });
    const scope = holder ? parseScopeMember(holder.member) : null;
    return scope && { ...scope, id };
  }

  /** The record of an id, whatever its scope (ids unique across scopes only). */
  async find(id: string): Promise<StoredRecord<T> | null> {
    const ref = await this.locate(id);
    return ref ? this.get(ref) : null;
  }

  /**
   * One scope's records in creation order: one page, or all of them; `total` counts the scope's
   * listing entries, `entries` those the page covered (a record gone leaves an entry a while).
   */
  async list(scope: RecordScope, page?: { offset: number; limit: number }): Promise<{ records: StoredRecord<T>[]; total: number; entries: number }> {
    const index = this.keys.scopeIndex(scope);
    const [entries, total] = await Promise.all([page ? this.opts.state.indexRange(index, page) : this.allEntries(index), this.opts.state.indexCount(index)]);
    const found = await Promise.all(entries.map((e) => this.get({ ...scope, id: e.member })));
    return { records: found.filter((f): f is StoredRecord<T> => f !== null), total, entries: entries.length };
  }

  /**
   * One page of the newest records of a scope (namespace and tenant), or of every scope (neither),
   * read from their listing index: only the page's records are read, and `total` is the index's
   * count. Null for a namespace or a tenant alone, which no index answers (use listIn).
   */
  async newestPage(
    filter: { namespace?: string | undefined; tenant?: string | undefined },
    page: { offset: number; limit: number },
  ): Promise<{ records: T[]; total: number } | null> {
    const { namespace, tenant } = filter;
    const scoped = namespace !== undefined && tenant !== undefined;
    if (!scoped && (namespace !== undefined || tenant !== undefined)) return null;
    const index = scoped ? this.keys.scopeIndex({ namespace, tenant }) : this.keys.all;
    const holderOf = (member: string): RecordRef | null => (scoped ? { namespace, tenant, id: member } : parseGlobalMember(member));
    const [entries, total] = await Promise.all([this.opts.state.indexRange(index, { rev: true, ...page }), this.opts.state.indexCount(index)]);
    const reads = await Promise.all(
      entries.map(async (entry) => {
        const ref = holderOf(entry.member);
        return { entry, found: ref ? await this.read(ref) : null };
      }),
    );
    // An entry a dead process left (its record gone) goes, as listAll drops it: it would shorten
    // every page it falls in, and count in `total`, for good.
    let evicted = 0;
    for (const { entry, found } of reads) if (found === null || found.kind === 'absent') evicted += (await this.claims.evict(index, entry, holderOf)) ? 1 : 0;
    const records = reads.flatMap(({ found }) => (found?.kind === 'live' ? [found.stored.record] : []));
    return { records, total: total - evicted };
  }

  /**
   * The live records of a namespace and/or tenant (an absent one: any), in creation order: one
   * scope's listing when both are given, else every record, filtered. What a list route serves.
   */
  async listIn(filter: { namespace?: string | undefined; tenant?: string | undefined }): Promise<T[]> {
    const { namespace, tenant } = filter;
    const { records } = namespace !== undefined && tenant !== undefined ? await this.list({ namespace, tenant }) : await this.listAll();
    return records.map((s) => s.record).filter((r) => (namespace === undefined || r.namespace === namespace) && (tenant === undefined || r.tenant === tenant));
  }

  /** Every live record in creation order; `bad` names those that no longer decode. Drops listing entries left by dead processes. */
  async listAll(): Promise<{ records: StoredRecord<T>[]; bad: RecordRef[] }> {
    const records: StoredRecord<T>[] = [];
    const bad: RecordRef[] = [];
    const gone: IndexEntry[] = [];
    const entries = await this.allEntries(this.keys.all);
    const reads = await Promise.all(
      entries.map(async (entry) => {
        const ref = parseGlobalMember(entry.member);
        return { entry, ref, found: ref ? await this.read(ref) : null };
      }),
    );
    for (const { entry, ref, found } of reads) {
      if (found?.kind === 'live') records.push(found.stored);
      else if (found?.kind === 'bad' && ref) bad.push(ref);
      else gone.push(entry);
    }
    // After reading every page: evicting while paging would shift later pages past live records.
    for (const entry of gone) await this.claims.evict(this.keys.all, entry, parseGlobalMember);
    return { records, bad };
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
      return (await this.swap(stored, change(stored.record), false)) ?? RETRY;
    });
    if (updated) await this.announce();
    return updated;
  }

  /** One compare-and-swap from what was read (a claim, like an occurrence's); null when anything else wrote first. */
  async swap(stored: StoredRecord<T>, next: T, announce = true): Promise<StoredRecord<T> | null> {
    const ref = refOf(stored.record);
    if (next.id !== ref.id || next.namespace !== ref.namespace || next.tenant !== ref.tenant) {
      throw new Error(`a record's id, namespace and tenant never change (${JSON.stringify(ref)})`);
    }
    const cas = await this.opts.state.compareAndSwap(this.keys.record(ref), stored.version, encodeStored(next, stored.claims));
    if (!cas.ok) return null;
    if (announce) await this.announce();
    return { record: next, version: cas.version, claims: stored.claims };
  }

  /** True when this call deleted the record (an unreadable one included). Its claims are given back after the tombstone. */
  async remove(target: RecordRef | string): Promise<boolean> {
    const ref = await this.resolve(target);
    if (!ref) return false;
    const key = this.keys.record(ref);
    const deleted = await retryCas({ what: `${this.opts.label} ${ref.id}`, attempts: this.opts.attempts }, async () => {
      const current = await this.opts.state.getVersioned(key);
      const form = decodeStored(current?.value);
      if (!current || form.kind === 'gone') return null;
      const cas = await this.opts.state.compareAndSwap(key, current.version, TOMBSTONE, { ttlMs: this.tombstoneTtlMs });
      return cas.ok ? form : RETRY;
    });
    if (!deleted) return false;
    const record = deleted.kind === 'live' ? this.decode(deleted.raw) : null;
    // An unreadable record's claims are unknown: they are left for eviction, which its tombstone allows.
    await this.afterRemove(ref, record, deleted.kind === 'live' ? deleted.claims : null);
    return true;
  }

  /** Deletes the record as it was read, by one compare-and-swap (a claim, like a drain's); false when anything else wrote first. */
  async removeAt(stored: StoredRecord<T>): Promise<boolean> {
    const ref = refOf(stored.record);
    const cas = await this.opts.state.compareAndSwap(this.keys.record(ref), stored.version, TOMBSTONE, { ttlMs: this.tombstoneTtlMs });
    if (!cas.ok) return false;
    await this.afterRemove(ref, stored.record, stored.claims);
    return true;
  }

  /** After the tombstone: gives back the claims its create took, then tells the replicas. */
  private async afterRemove(ref: RecordRef, record: T | null, claims: ClaimScores | null | undefined): Promise<void> {
    if (claims) await this.claims.release(this.claimsOf(ref, record, claims));
    await this.announce();
  }

  /** The exclusive claim on a record's id: its index, member and how a member names its holder. */
  private idClaim(ref: RecordRef): [ReturnType<RecordKeys['idClaim']>, string, HolderOf] {
    const global = this.opts.globalIds === true;
    const key = this.keys.idClaim(ref, global);
    if (!global) return [key, ref.id, () => ref];
    return [
      key,
      scopeMember(ref),
      (member) => {
        const scope = parseScopeMember(member);
        return scope && { ...scope, id: ref.id };
      },
    ];
  }

  /** The claims a record's create took, with their scores, id claim last (given back last). */
  private claimsOf(ref: RecordRef, record: T | null, scores: ClaimScores): Claim[] {
    const [idKey, idMember] = this.idClaim(ref);
    const unique = record ? this.opts.uniqueName?.(record) : undefined;
    return [
      { index: idKey, member: idMember, score: scores.id },
      ...(unique !== undefined && scores.unique !== null ? [{ index: this.keys.unique(ref, unique), member: ref.id, score: scores.unique }] : []),
      { index: this.keys.scopeIndex(ref), member: ref.id, score: scores.scope },
      { index: this.keys.all, member: globalMember(ref), score: scores.all },
    ];
  }

  /**
   * For an evictor: fences a record that is not live (a tombstone written by compare-and-swap at
   * the version seen), so a create still holding that version fails. False when it is live, or
   * changed meanwhile (a create landed, or another evictor fenced it first: then ask again later).
   */
  private async letGo(ref: RecordRef): Promise<boolean> {
    const found = await this.read(ref);
    if (found.kind !== 'absent') return false;
    return (await this.opts.state.compareAndSwap(this.keys.record(ref), found.version, TOMBSTONE, { ttlMs: this.tombstoneTtlMs })).ok;
  }

  private async allEntries(index: ReturnType<RecordKeys['scopeIndex']>): Promise<IndexEntry[]> {
    const entries: IndexEntry[] = [];
    for (let offset = 0; ; offset += LIST_PAGE) {
      const page = await this.opts.state.indexRange(index, { offset, limit: LIST_PAGE });
      entries.push(...page);
      if (page.length < LIST_PAGE) return entries;
    }
  }

  private async resolve(target: RecordRef | string): Promise<RecordRef | null> {
    return typeof target === 'string' ? this.locate(target) : target;
  }

  private async read(ref: RecordRef): Promise<Read<T>> {
    const current = await this.opts.state.getVersioned(this.keys.record(ref));
    const form = decodeStored(current?.value);
    const version = current?.version ?? 0;
    if (form.kind === 'gone') return { kind: 'absent', version };
    const record = this.decode(form.raw);
    // A record stored under another ref than its own fields say is as unreadable as broken JSON.
    if (!record || !form.claims || record.id !== ref.id || record.namespace !== ref.namespace || record.tenant !== ref.tenant) return { kind: 'bad', version };
    return { kind: 'live', stored: { record, version, claims: form.claims } };
  }

  private decode(raw: unknown): T | null {
    try {
      return raw === undefined ? null : this.opts.decode(raw);
    } catch {
      return null;
    }
  }

  /** After a write has landed: a failed reload or broadcast is logged, not thrown (the poll of the generation catches up). */
  private async announce(): Promise<void> {
    try {
      await this.sync?.announce();
    } catch (err) {
      this.opts.sync?.log.error(
        { err, kind: this.opts.kind },
        'shared records changed but the change could not be announced; replicas catch up on their next poll',
      );
    }
  }
}

function refOf(record: RecordValue): RecordRef {
  return { namespace: record.namespace, tenant: record.tenant, id: record.id };
}
