import { systemClock, type Clock } from '@sluice/core';
import { parseKey, renderKey } from '../keys.js';
import { warnHandlerError } from '../subscriber-errors.js';
import type {
  BulkWriteOp,
  BoundedAddResult,
  CasResult,
  IndexEntry,
  IndexRangeQuery,
  LogDelivery,
  LogEntry,
  ScanOptions,
  ScanPage,
  SetOptions,
  StateKey,
  StateStore,
  Unsubscribe,
  Versioned,
  WindowCount,
  WindowOptions,
  WriteBatchOptions,
  WriteOp,
} from '../state-store.js';
import { checkScore, logMaxLen, maxMembersArg, popLimit, rangeArgs, scanCount, scoreBounds, ttlOf, windowArgs } from '../store-args.js';
import { checkBulk, checkSameScope, validateWrites, writeKey } from '../write-ops.js';
import { compareLogIds } from '../log-ids.js';
import { Keyspace, type KeyspaceLimits } from './memory-keyspace.js';
import { LocalBus } from './memory-pubsub.js';
import { addToIndex, applyWrite, checkApplicable, integer } from './memory-writes.js';

export interface MemoryStateStoreOptions {
  /** Time source for every expiry and window (default: the system clock). */
  clock?: Clock;
  /** How often expired keys nobody reads are freed (default 10 s); expiry itself is exact. */
  sweepIntervalMs?: number;
  /** Called when a subscribe handler throws; default: process.emitWarning. */
  onHandlerError?: (channel: string, err: unknown) => void;
  /** Keys and value characters the store may hold outside exempt kinds (default: no limits); beyond them writes throw StateFullError. */
  limits?: KeyspaceLimits;
}

/** Keys are rendered as on Redis so the map's order (and scan cursors) follow the same shape. */
const PREFIX = 'mem';

/**
 * The single-process StateStore. Each method mirrors the Redis command or Lua script of the
 * same name branch for branch, on a clock instead of server time. No method awaits before its
 * last write, so every operation is atomic within the process.
 */
export class MemoryStateStore implements StateStore {
  readonly backend = 'memory' as const;
  readonly sharded = false;
  private readonly ks: Keyspace;
  private readonly bus: LocalBus;

  constructor(opts: MemoryStateStoreOptions = {}) {
    this.ks = new Keyspace(opts.clock ?? systemClock, opts.sweepIntervalMs ?? 10_000, opts.limits ?? null);
    this.bus = new LocalBus(opts.onHandlerError ?? warnHandlerError);
  }

  /**
   * Characters of the string and hash values held under keys of `kind` (for ASCII text, bytes):
   * what a store capped by size counts, in O(1). Sorted-set members and logs are not included.
   */
  storedBytes(kind: string): number {
    return this.ks.storedBytes(kind);
  }

  /** storedBytes for every kind holding any (the `sluice_memory_store_bytes` gauge). */
  storedBytesByKind(): ReadonlyMap<string, number> {
    return this.ks.storedBytesByKind();
  }

  /** Drops expired keys now; returns how many (tests, and a hook for callers under memory pressure). */
  sweep(): number {
    return this.ks.sweep();
  }

  async get(key: StateKey): Promise<string | null> {
    return this.ks.typed(r(key), 'string')?.value ?? null;
  }

  /** SET [PX]: overwrites any family and replaces (or clears) the TTL. */
  async set(key: StateKey, value: string, opts?: SetOptions): Promise<void> {
    this.ks.put(r(key), { type: 'string', kind: key.kind, value, expiresAt: this.expiry(ttlOf(opts)) });
  }

  async delete(key: StateKey): Promise<boolean> {
    return this.ks.delete(r(key));
  }

  async deleteIfValue(key: StateKey, value: string): Promise<boolean> {
    if (this.ks.typed(r(key), 'string')?.value !== value) return false;
    return this.ks.delete(r(key));
  }

  /** SET NX [PX]: any live key of any family blocks the write. */
  async setIfAbsent(key: StateKey, value: string, opts?: SetOptions): Promise<boolean> {
    const ttl = ttlOf(opts);
    if (this.ks.live(r(key)) !== undefined) return false;
    this.ks.put(r(key), { type: 'string', kind: key.kind, value, expiresAt: this.expiry(ttl) });
    return true;
  }

  /** Mirrors lua/increment-window-1.ts. */
  async incrementWindow(key: StateKey, opts: WindowOptions): Promise<WindowCount> {
    const { by, windowMs, limit, windowEndsAtMs } = windowArgs(opts);
    const now = this.ks.now();
    const entry = this.ks.typed(r(key), 'string');
    let count = entry === undefined ? 0 : integer(entry.value);
    let ttl = entry?.expiresAt === undefined ? -1 : entry.expiresAt - now;
    const otherWindow = windowEndsAtMs !== undefined && (ttl < 0 || Math.abs(now + ttl - windowEndsAtMs) * 2 >= windowMs);
    if (otherWindow || (limit !== undefined && count + by > limit)) {
      if (ttl < 0) ttl = windowMs;
      return { count, allowed: false, resetAtMs: now + ttl };
    }
    count += by;
    // Created by this call (or a counter without expiry): anchor the window here.
    if (ttl < 0) ttl = windowMs;
    this.ks.put(r(key), { type: 'string', kind: key.kind, value: String(count), expiresAt: now + ttl });
    return { count, allowed: true, resetAtMs: now + ttl };
  }

  /** Mirrors lua/read-window-1.ts. */
  async readWindow(key: StateKey): Promise<{ count: number; resetAtMs: number | null }> {
    const entry = this.ks.typed(r(key), 'string');
    if (entry === undefined) return { count: 0, resetAtMs: null };
    return { count: Number(entry.value), resetAtMs: entry.expiresAt ?? null };
  }

  async getVersioned(key: StateKey): Promise<Versioned | null> {
    const entry = this.ks.typed(r(key), 'hash');
    return entry === undefined ? null : { value: entry.value, version: entry.version };
  }

  /** Mirrors lua/compare-and-swap-1.ts. */
  async compareAndSwap(key: StateKey, expectedVersion: number, value: string, opts?: SetOptions): Promise<CasResult> {
    const ttl = ttlOf(opts);
    const current = this.ks.typed(r(key), 'hash')?.version ?? 0;
    if (current !== expectedVersion) return { ok: false, version: current };
    const version = current + 1;
    this.ks.put(r(key), { type: 'hash', kind: key.kind, value, version, expiresAt: this.expiry(ttl) });
    return { ok: true, version };
  }

  /** ZADD: adds or moves the member. */
  async indexAdd(index: StateKey, member: string, score: number): Promise<void> {
    addToIndex(this.ks, r(index), index, member, checkScore(score));
  }

  /** Mirrors lua/index-add-bounded-1.ts. */
  async indexAddBounded(index: StateKey, member: string, score: number, maxMembers: number): Promise<BoundedAddResult> {
    checkScore(score);
    maxMembersArg(maxMembers);
    const entry = this.ks.typed(r(index), 'zset');
    if (entry?.members.has(member)) return 'present';
    if ((entry?.members.size ?? 0) >= maxMembers) return 'full';
    addToIndex(this.ks, r(index), index, member, score);
    return 'added';
  }

  /** ZREM: an emptied index disappears, as in Redis. */
  async indexRemove(index: StateKey, member: string, score?: number): Promise<boolean> {
    const entry = this.ks.typed(r(index), 'zset');
    if (entry === undefined || !entry.members.remove(member, score === undefined ? undefined : checkScore(score))) return false;
    if (entry.members.size === 0) this.ks.delete(r(index));
    return true;
  }

  /** Mirrors lua/index-remove-if-1.ts. */
  async indexRemoveIf(index: StateKey, member: string, score: number): Promise<boolean> {
    checkScore(score);
    const entry = this.ks.typed(r(index), 'zset');
    if (entry?.members.score(member) !== score) return false;
    return this.indexRemove(index, member);
  }

  /** Mirrors lua/index-pop-due-1.ts: lowest score first, ties by member bytes (Redis order). */
  async indexPopDue(index: StateKey, maxScore: number, limit: number): Promise<IndexEntry[]> {
    checkScore(maxScore);
    popLimit(limit);
    const entry = this.ks.typed(r(index), 'zset');
    if (entry === undefined || limit === 0) return [];
    const popped = entry.members.popDue(maxScore, limit);
    if (entry.members.size === 0) this.ks.delete(r(index));
    return popped;
  }

  /** ZRANGE BYSCORE [REV] LIMIT offset limit WITHSCORES */
  async indexRange(index: StateKey, query: IndexRangeQuery): Promise<IndexEntry[]> {
    const { min, max, rev, offset, limit } = rangeArgs(query);
    return this.ks.typed(r(index), 'zset')?.members.range(min, max, rev, offset, limit) ?? [];
  }

  /** ZCOUNT */
  async indexCount(index: StateKey, min?: number, max?: number): Promise<number> {
    const bounds = scoreBounds(min, max);
    return this.ks.typed(r(index), 'zset')?.members.count(bounds.min, bounds.max) ?? 0;
  }

  /** ZREMRANGEBYSCORE: an emptied index disappears, as in Redis. */
  async indexRemoveRange(index: StateKey, min: number, max: number): Promise<number> {
    const bounds = scoreBounds(min, max);
    const entry = this.ks.typed(r(index), 'zset');
    if (entry === undefined) return 0;
    const removed = entry.members.removeRange(bounds.min, bounds.max);
    if (entry.members.size === 0) this.ks.delete(r(index));
    return removed;
  }

  /** MGET: null for absent keys and, as on Redis, for keys of another family. */
  async getMany(keys: readonly StateKey[]): Promise<(string | null)[]> {
    return keys.map((key) => {
      const entry = this.ks.live(r(key));
      return entry?.type === 'string' ? entry.value : null;
    });
  }

  /**
   * Mirrors redis/batch.ts: a failing write (wrong family, not an integer) does not stop the
   * ones after it, as in a Redis pipeline; the call then rejects with the first error.
   */
  async writeBatch(ops: readonly WriteOp[], opts: WriteBatchOptions = {}): Promise<void> {
    const errors = this.applyEach(validateWrites(ops));
    if (opts.append !== undefined) this.append(opts.append.log, opts.append.message, undefined);
    if (errors.length > 0) throw errors[0];
  }

  /** Applies every write, as a Redis pipeline runs every command: one that fails does not stop the others. Returns the errors. */
  private applyEach(writes: readonly WriteOp[]): unknown[] {
    const errors: unknown[] = [];
    for (const w of writes) {
      try {
        applyWrite(this.ks, r(writeKey(w)), w);
      } catch (error) {
        errors.push(error);
      }
    }
    return errors;
  }

  /** Mirrors lua/compare-and-swap-with-1.ts: every write is checked before anything is written. */
  async compareAndSwapWith(key: StateKey, expectedVersion: number, value: string, writes: readonly WriteOp[]): Promise<CasResult> {
    const checked = validateWrites(writes);
    checkSameScope(key, checked);
    const current = this.ks.typed(r(key), 'hash')?.version ?? 0;
    if (current !== expectedVersion) return { ok: false, version: current };
    for (const w of checked) checkApplicable(this.ks, r(writeKey(w)), w);
    this.ks.assertRoom([
      { rendered: r(key), kind: key.kind, size: value.length },
      ...checked.map((w) => ({
        rendered: r(writeKey(w)),
        kind: writeKey(w).kind,
        size: w.op === 'set' ? w.value.length : w.op === 'increment' ? String(w.by).length : 0,
      })),
    ]);
    const version = current + 1;
    this.ks.put(r(key), { type: 'hash', kind: key.kind, value, version, expiresAt: undefined });
    for (const w of checked) applyWrite(this.ks, r(writeKey(w)), w);
    return { ok: true, version };
  }

  /**
   * Pages through a sorted snapshot of the kind's string keys; the cursor is the last key
   * returned, so keys present for the whole scan are returned exactly once. Window counters are
   * strings here as on Redis: keep one family per kind.
   */
  async scan(kind: string, opts?: ScanOptions): Promise<ScanPage> {
    const count = scanCount(opts);
    const after = opts?.cursor;
    const keyOf = (rendered: string) => parseKey(PREFIX, rendered) as StateKey; // every key here was rendered with PREFIX
    const matches = this.ks.sorted((e, rendered) => {
      if (e.type !== 'string' || e.kind !== kind) return false;
      if (opts?.namespace === undefined && opts?.tenant === undefined) return true;
      const key = keyOf(rendered);
      return (opts.namespace === undefined || key.namespace === opts.namespace) && (opts.tenant === undefined || key.tenant === opts.tenant);
    });
    const start = after === undefined ? 0 : matches.findIndex(([rendered]) => rendered > after);
    const page = start < 0 ? [] : matches.slice(start, start + count);
    const entries = page.flatMap(([rendered, e]) => (e.type === 'string' ? [{ key: keyOf(rendered), value: e.value }] : []));
    const last = page.at(-1);
    const more = start >= 0 && start + count < matches.length;
    return { entries, cursor: more && last !== undefined ? last[0] : null };
  }

  /** XADD MAXLEN: ids `<ms>-<seq>` from the store's clock, increasing even if the clock goes back. */
  async logAppend(log: StateKey, message: string, maxLen: number): Promise<string> {
    logMaxLen(maxLen);
    return this.append(log, message, maxLen);
  }

  private append(log: StateKey, message: string, maxLen: number | undefined): string {
    const rendered = r(log);
    let entry = this.ks.typed(rendered, 'stream');
    if (!entry) {
      entry = { type: 'stream', kind: log.kind, entries: [], lastMs: 0, lastSeq: -1, groups: new Map(), expiresAt: undefined };
      this.ks.put(rendered, entry);
    }
    const now = this.ks.now();
    if (now > entry.lastMs) {
      entry.lastMs = now;
      entry.lastSeq = 0;
    } else entry.lastSeq += 1;
    const id = `${entry.lastMs}-${entry.lastSeq}`;
    entry.entries.push({ id, message });
    if (maxLen !== undefined && entry.entries.length > maxLen) entry.entries.splice(0, entry.entries.length - maxLen);
    return id;
  }

  async logRange(log: StateKey, opts: { afterId?: string; limit: number }): Promise<LogEntry[]> {
    const entries = this.ks.typed(r(log), 'stream')?.entries ?? [];
    const after = opts.afterId;
    const start = after === undefined ? 0 : entries.findIndex((e) => compareLogIds(e.id, after) > 0);
    return start < 0 ? [] : entries.slice(start, start + opts.limit).map((e) => ({ ...e }));
  }

  async logLength(log: StateKey): Promise<number> {
    return this.ks.typed(r(log), 'stream')?.entries.length ?? 0;
  }

  async logRemove(log: StateKey, ids: readonly string[]): Promise<number> {
    const entry = this.ks.typed(r(log), 'stream');
    if (!entry) return 0;
    const removing = new Set(ids);
    const before = entry.entries.length;
    entry.entries = entry.entries.filter((e) => !removing.has(e.id));
    return before - entry.entries.length;
  }

  async logGroupCreate(log: StateKey, group: string, from: 'start' | 'end'): Promise<boolean> {
    const rendered = r(log);
    let entry = this.ks.typed(rendered, 'stream');
    if (!entry) {
      entry = { type: 'stream', kind: log.kind, entries: [], lastMs: 0, lastSeq: -1, groups: new Map(), expiresAt: undefined };
      this.ks.put(rendered, entry);
    }
    if (entry.groups.has(group)) return false;
    const lastDelivered = from === 'start' ? '0-0' : (entry.entries.at(-1)?.id ?? '0-0');
    entry.groups.set(group, { lastDelivered, pending: new Map() });
    return true;
  }

  async logGroupRead(log: StateKey, group: string, consumer: string, count: number): Promise<LogDelivery[]> {
    const { entry, g } = this.group(log, group);
    const after = g.lastDelivered;
    const fresh = entry.entries.filter((e) => compareLogIds(e.id, after) > 0).slice(0, count);
    const now = this.ks.now();
    for (const e of fresh) g.pending.set(e.id, { consumer, deliveredAt: now, deliveries: 1 });
    if (fresh.length > 0) g.lastDelivered = (fresh.at(-1) as { id: string }).id;
    return fresh.map((e) => ({ ...e, deliveries: 1 }));
  }

  async logGroupClaim(
    log: StateKey,
    group: string,
    consumer: string,
    minIdleMs: number,
    count: number,
    opts?: { othersOnly?: boolean },
  ): Promise<LogDelivery[]> {
    const { entry, g } = this.group(log, group);
    const now = this.ks.now();
    const claimed: LogDelivery[] = [];
    for (const [id, p] of [...g.pending].sort(([a], [b]) => compareLogIds(a, b))) {
      if (claimed.length >= count) break;
      if (now - p.deliveredAt < minIdleMs || (opts?.othersOnly === true && p.consumer === consumer)) continue;
      const found = entry.entries.find((e) => e.id === id);
      if (!found) {
        g.pending.delete(id); // trimmed away while pending, as XAUTOCLAIM drops it
        continue;
      }
      const next = { consumer, deliveredAt: now, deliveries: p.deliveries + 1 };
      g.pending.set(id, next);
      claimed.push({ ...found, deliveries: next.deliveries });
    }
    return claimed;
  }

  async logGroupAck(log: StateKey, group: string, ids: readonly string[]): Promise<number> {
    const { g } = this.group(log, group);
    return ids.filter((id) => g.pending.delete(id)).length;
  }

  /** Mirrors lua/log-ack-with-1.ts. */
  async logGroupAckWith(
    log: StateKey,
    group: string,
    consumer: string,
    ids: readonly string[],
    writes: readonly BulkWriteOp[],
  ): Promise<{ applied: boolean; failed: number }> {
    if (ids.length === 0) throw new RangeError('logGroupAckWith: no message ids');
    const checked = validateWrites(checkBulk(writes));
    const { entry, g } = this.group(log, group);
    if (!ids.every((id) => g.pending.get(id)?.consumer === consumer)) return { applied: false, failed: 0 };
    const failed = this.applyEach(checked).length;
    const acked = new Set(ids);
    for (const id of ids) g.pending.delete(id);
    entry.entries = entry.entries.filter((e) => !acked.has(e.id));
    return { applied: true, failed };
  }

  /** Consumers exist here only through their pending messages: nothing to forget unless it holds one. */
  async logGroupRemoveConsumer(log: StateKey, group: string, consumer: string): Promise<boolean> {
    const { g } = this.group(log, group);
    return ![...g.pending.values()].some((p) => p.consumer === consumer);
  }

  /** Consumers exist here only through their pending messages: none is idle without one. */
  async logGroupForgetIdle(log: StateKey, group: string, _minIdleMs: number): Promise<number> {
    this.group(log, group); // NOGROUP as Redis
    return 0;
  }

  async logLastId(log: StateKey): Promise<string | null> {
    return this.ks.typed(r(log), 'stream')?.entries.at(-1)?.id ?? null;
  }

  async logGroupLag(log: StateKey, group: string): Promise<{ pending: number; undelivered: number }> {
    const { entry, g } = this.group(log, group);
    const after = g.lastDelivered;
    return { pending: g.pending.size, undelivered: entry.entries.filter((e) => compareLogIds(e.id, after) > 0).length };
  }

  /** NOGROUP, as Redis says it, for a log or group that does not exist. */
  private group(log: StateKey, group: string) {
    const entry = this.ks.typed(r(log), 'stream');
    const g = entry?.groups.get(group);
    if (!entry || !g) throw new Error(`NOGROUP No such key or consumer group ${group}`);
    return { entry, g };
  }

  async publish(channel: string, message: string): Promise<void> {
    this.ks.now(); // throws when closed
    this.bus.publish(channel, message);
  }

  async subscribe(channel: string, handler: (message: string) => void): Promise<Unsubscribe> {
    this.ks.now(); // throws when closed
    return this.bus.subscribe(channel, handler);
  }

  available(): boolean {
    return true;
  }

  /** The memory backend never loses its connection. */
  onReconnected(): () => void {
    return () => {};
  }

  onConnectionLost(): () => void {
    return () => {};
  }

  async ping(): Promise<boolean> {
    try {
      this.ks.now();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.bus.close();
    this.ks.close();
  }

  private expiry(ttl: number | undefined): number | undefined {
    return ttl === undefined ? undefined : this.ks.now() + ttl;
  }
}

function r(key: StateKey): string {
  return renderKey(PREFIX, key);
}
