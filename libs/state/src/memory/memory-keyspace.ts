import type { Clock, TimerHandle } from '@sluice/core';
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

export class Keyspace {
  private readonly entries = new Map<string, Entry>();
  /** Characters of string and hash values held, by key kind: kept exact on every change, read in O(1). */
  private readonly bytes = new Map<string, number>();
  private readonly sweeper: TimerHandle;
  private closed = false;

  /** Expiry is lazy on access (like Redis); the sweep only frees memory of keys nobody reads. */
  constructor(
    private readonly clock: Clock,
    sweepIntervalMs: number,
  ) {
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

  put(rendered: string, entry: Entry): void {
    this.assertOpen();
    if (entry.type === 'string' || entry.type === 'hash') flatten(entry.value);
    const old = this.entries.get(rendered);
    // A new key is kept as long as its entry: flat, not the pieces renderKey concatenated.
    if (old === undefined) flatten(rendered);
    if (old !== undefined) this.count(old.kind, -valueSize(old));
    this.count(entry.kind, valueSize(entry));
    this.entries.set(rendered, entry);
  }

  /** Replaces a string entry's value in place (a counter's increment), keeping the byte count. */
  setValue(entry: EntryOf<'string'>, value: string): void {
    this.count(entry.kind, value.length - entry.value.length);
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
    return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
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
  }

  private drop(rendered: string, entry: Entry): void {
    this.entries.delete(rendered);
    this.count(entry.kind, -valueSize(entry));
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
