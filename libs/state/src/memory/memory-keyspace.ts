import type { Clock, TimerHandle } from '@sluice/core';
import type { StateKey } from '../state-store.js';
import { flatten } from './flat-string.js';
import type { SortedIndex } from './sorted-index.js';

/* The memory backend's keyspace: one map of rendered key → typed entry, like Redis's. */

/**
 * 'string' also holds counters (window counters, WriteOp increments) as a decimal integer, as
 * Redis's INCRBY does: get(), getMany() and scan() read them like any plain value.
 */
export type Entry =
  | { type: 'string'; key: StateKey; value: string; expiresAt: number | undefined }
  | { type: 'hash'; key: StateKey; value: string; version: number; expiresAt: number | undefined }
  | { type: 'zset'; key: StateKey; members: SortedIndex; expiresAt: number | undefined }
  | {
      type: 'stream';
      key: StateKey;
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

export class Keyspace {
  private readonly entries = new Map<string, Entry>();
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
      this.entries.delete(rendered);
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
    this.entries.set(rendered, entry);
  }

  delete(rendered: string): boolean {
    return this.live(rendered) !== undefined && this.entries.delete(rendered);
  }

  /** Live entries accepted by `filter`, sorted by rendered key: a stable order for scan cursors. */
  sorted(filter: (entry: Entry) => boolean): [string, Entry][] {
    const now = this.now();
    const out: [string, Entry][] = [];
    for (const [rendered, entry] of this.entries) {
      if ((entry.expiresAt === undefined || now < entry.expiresAt) && filter(entry)) out.push([rendered, entry]);
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
        this.entries.delete(rendered);
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
  }

  /** Using a closed store is a lifecycle bug; fail like a closed Redis connection would. */
  private assertOpen(): void {
    if (this.closed) throw new Error('state store is closed');
  }
}
