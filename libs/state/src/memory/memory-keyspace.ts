import { compareCodeUnits, type Clock, type TimerHandle } from '@sluice/core';
import { flatten } from './flat-string.js';
import type { SortedIndex } from './sorted-index.js';

/* The memory backend's keyspace: one map of rendered key → typed entry, like Redis's. */

/**
 * 'string' also holds counters (window counters, WriteOp increments) as a decimal integer, as
 * Redis's INCRBY does: get(), getMany() and scan() read them like any plain value.
 */
/**
 * Each entry keeps its key's kind (byte counts are by kind), not a copy of the key: the rendered
 * key it is stored under says the rest (parseKey), and a retained key object per entry was ~56
 * bytes of heap per audit record, twice.
 */
export type Entry =
  | { type: 'string'; kind: string; value: string; expiresAt: number | undefined }
  | { type: 'hash'; kind: string; value: string; version: number; expiresAt: number | undefined }
  | { type: 'zset'; kind: string; members: SortedIndex; expiresAt: number | undefined }
  | {
      type: 'stream';
      kind: string;
      entries: { id: string; message: string }[];
      lastMs: number;
      lastSeq: number;
      groups: Map<string, LogGroup>;
      expiresAt: undefined;
    };

/** A consumer group of a log: how far it has read, and what it handed out and has not had acknowledged. */
interface LogGroup {
  lastDelivered: string;
  pending: Map<string, { consumer: string; deliveredAt: number; deliveries: number }>;
}

type EntryOf<T extends Entry['type']> = Extract<Entry, { type: T }>;

/** Same text as Redis, so a family mix-up fails alike on both backends. */
const WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value';

/** What an entry's value holds in characters (string and hash values; sorted sets and logs count 0). */
function valueSize(entry: Entry): number {
  return entry.type === 'string' || entry.type === 'hash' ? entry.value.length : 0;
}

/** Caps on what the keyspace holds, outside the kinds that bound themselves. */
export interface KeyspaceLimits {
  /** Keys of any type. */
  maxKeys: number;
  /** Characters of string and hash values. */
  maxBytes: number;
  /** Kinds left out of both counts (the audit trail's: its store evicts by its own caps). */
  exemptKinds: readonly string[];
  /**
   * Kinds whose writes are how the store drains (a group flush's outbox: it takes the events its
   * group record lets go of, until the notification is sent and they are freed). A write of one may
   * go past the limits by DRAIN_RESERVE of them: at the limits, a store filled by pending groups
   * could otherwise never flush them, and would refuse every new key for good.
   */
  drainKinds?: readonly string[];
}

/** The share of each limit kept for draining writes. */
const DRAIN_RESERVE = 0.05;

/**
 * What a write that would take the keyspace past its limits is refused with. The message starts
 * as Redis's does when it refuses a write at `maxmemory` under `noeviction`, so callers treat both
 * alike: the backend is full for now (503 STATE_UNAVAILABLE), not broken.
 */
export class StateFullError extends Error {
  override readonly name = 'StateFullError';
}

/** How often a refused write may sweep expired keys first (a sweep walks every key). */
const FULL_SWEEP_EVERY_MS = 1000;

export class Keyspace {
  private readonly entries = new Map<string, Entry>();
  /** Characters of string and hash values held, by key kind: kept exact on every change, read in O(1). */
  private readonly bytes = new Map<string, number>();
  private readonly sweeper: TimerHandle;
  private closed = false;
  private readonly exempt: ReadonlySet<string>;
  private readonly drain: ReadonlySet<string>;
  /** Keys and value characters outside the exempt kinds, kept exact like `bytes`. */
  private cappedKeys = 0;
  private cappedBytes = 0;
  private lastFullSweepAt = Number.NEGATIVE_INFINITY;

  /** Expiry is lazy on access (like Redis); the sweep only frees memory of keys nobody reads. */
  constructor(
    private readonly clock: Clock,
    sweepIntervalMs: number,
    private readonly limits: KeyspaceLimits | null = null,
  ) {
    this.exempt = new Set(limits?.exemptKinds ?? []);
    this.drain = new Set(limits?.drainKinds ?? []);
    this.sweeper = clock.setRepeating(() => this.sweep(), sweepIntervalMs);
  }

  now(): number {
    this.assertOpen();
    return this.clock.now();
  }

  /** The live entry, deleting it first when expired (a key is gone from its expiresAt on). */
  live(rendered: string): Entry | undefined {
    this.assertOpen();
    const entry = this.entries.get(rendered);
    if (entry === undefined) return undefined;
    if (entry.expiresAt !== undefined && this.now() >= entry.expiresAt) {
      this.drop(rendered, entry);
      return undefined;
    }
    return entry;
  }

  /** The live entry of one type; throws WRONGTYPE for another type, like Redis. */
  typed<T extends Entry['type']>(rendered: string, type: T): EntryOf<T> | undefined {
    const entry = this.live(rendered);
    if (entry === undefined) return undefined;
    if (entry.type !== type) throw new Error(WRONGTYPE);
    return entry as EntryOf<T>; // TS cannot narrow a union by a generic tag
  }

  /** Stores the entry under the key; throws StateFullError, changing nothing, when that would pass the limits. */
  put(rendered: string, entry: Entry): void {
    this.assertOpen();
    if (this.limits !== null && !this.exempt.has(entry.kind)) this.assertRoom([{ rendered, kind: entry.kind, size: valueSize(entry) }]);
    const old = this.entries.get(rendered);
    if (entry.type === 'string' || entry.type === 'hash') flatten(entry.value);
    // A new key is kept as long as its entry: flat, not the pieces renderKey concatenated.
    if (old === undefined) flatten(rendered);
    else this.uncount(old);
    this.countIn(entry);
    this.entries.set(rendered, entry);
  }

  /** Replaces a string entry's value in place (a counter's increment), keeping the byte count. */
  setValue(entry: EntryOf<'string'>, value: string): void {
    const delta = value.length - entry.value.length;
    this.count(entry.kind, delta);
    if (!this.exempt.has(entry.kind)) this.cappedBytes += delta;
    entry.value = value;
  }

  delete(rendered: string): boolean {
    const entry = this.live(rendered);
    if (entry === undefined) return false;
    this.drop(rendered, entry);
    return true;
  }

  /** Characters of string and hash values held under keys of `kind` (expired keys not yet freed included). */
  storedBytes(kind: string): number {
    return this.bytes.get(kind) ?? 0;
  }

  /** The same for every kind that holds any. */
  storedBytesByKind(): ReadonlyMap<string, number> {
    return new Map(this.bytes);
  }

  /** Live entries accepted by `filter`, sorted by rendered key: a stable order for scan cursors. */
  sorted(filter: (entry: Entry, rendered: string) => boolean): [string, Entry][] {
    const now = this.now();
    const out: [string, Entry][] = [];
    for (const [rendered, entry] of this.entries) {
      if ((entry.expiresAt === undefined || now < entry.expiresAt) && filter(entry, rendered)) out.push([rendered, entry]);
    }
    return out.sort(([a], [b]) => compareCodeUnits(a, b));
  }

  /** Drops expired entries; returns how many. */
  sweep(): number {
    if (this.closed) return 0;
    const now = this.clock.now();
    let dropped = 0;
    for (const [rendered, entry] of this.entries) {
      if (entry.expiresAt !== undefined && now >= entry.expiresAt) {
        this.drop(rendered, entry);
        dropped++;
      }
    }
    return dropped;
  }

  get size(): number {
    return this.entries.size;
  }

  close(): void {
    this.closed = true;
    this.sweeper.cancel();
    this.entries.clear();
    this.bytes.clear();
    this.cappedKeys = this.cappedBytes = 0;
  }

  private drop(rendered: string, entry: Entry): void {
    this.entries.delete(rendered);
    this.uncount(entry);
  }

  private countIn(entry: Entry): void {
    const size = valueSize(entry);
    this.count(entry.kind, size);
    if (this.exempt.has(entry.kind)) return;
    this.cappedKeys++;
    this.cappedBytes += size;
  }

  private uncount(entry: Entry): void {
    const size = valueSize(entry);
    this.count(entry.kind, -size);
    if (this.exempt.has(entry.kind)) return;
    this.cappedKeys--;
    this.cappedBytes -= size;
  }

  /**
   * Throws StateFullError unless writing every planned value (each replacing what its key holds)
   * stays within the limits; a write that shrinks what is held always may. Checked for a whole
   * compare-and-swap before it writes anything, so it stays all-or-nothing.
   */
  assertRoom(planned: readonly { rendered: string; kind: string; size: number }[]): void {
    if (this.limits === null || this.roomFor(planned)) return;
    this.sweepWhenFull();
    if (!this.roomFor(planned)) throw this.fullError();
  }

  private roomFor(planned: readonly { rendered: string; kind: string; size: number }[]): boolean {
    const limits = this.limits as KeyspaceLimits;
    let keys = this.cappedKeys;
    let bytes = this.cappedBytes;
    // Keys written twice in one plan count once; a single write (every put) needs no set.
    const seen = planned.length > 1 ? new Set<string>() : null;
    let allowance = 1;
    for (const { rendered, kind, size } of planned) {
      if (this.drain.has(kind)) allowance = 1 + DRAIN_RESERVE;
      if (this.exempt.has(kind)) continue;
      const again = seen?.has(rendered) ?? false;
      const old = again ? undefined : this.entries.get(rendered);
      const oldCapped = old !== undefined && !this.exempt.has(old.kind);
      if (!oldCapped && !again) keys++;
      bytes += size - (oldCapped ? valueSize(old) : 0);
      seen?.add(rendered);
    }
    return (keys <= limits.maxKeys * allowance || keys <= this.cappedKeys) && (bytes <= limits.maxBytes * allowance || bytes <= this.cappedBytes);
  }

  /** Expired keys still count until swept: a full keyspace sweeps before refusing (at most once a second). */
  private sweepWhenFull(): void {
    const now = this.clock.now();
    if (now - this.lastFullSweepAt < FULL_SWEEP_EVERY_MS) return;
    this.lastFullSweepAt = now;
    this.sweep();
  }

  private fullError(): StateFullError {
    const limits = this.limits as KeyspaceLimits;
    return new StateFullError(
      `OOM command not allowed: the memory backend holds ${this.cappedKeys} keys and ${this.cappedBytes} characters of values ` +
        `(state.memory_max_keys ${limits.maxKeys}, state.memory_max_bytes ${limits.maxBytes})`,
    );
  }

  private count(kind: string, delta: number): void {
    if (delta === 0) return;
    const total = (this.bytes.get(kind) ?? 0) + delta;
    if (total === 0) this.bytes.delete(kind);
    else this.bytes.set(kind, total);
  }

  /** Using a closed store is a lifecycle bug; fail like a closed Redis connection would. */
  private assertOpen(): void {
    if (this.closed) throw new Error('state store is closed');
  }
}
