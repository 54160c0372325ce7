/**
 * The StateStore contract. Every cross-replica decision in Sluice goes through one of these
 * primitives, and each is atomic on both backends (memory and Redis). The contract suite in
 * libs/state/test/contract pins the semantics; a new primitive gets a contract test first.
 *
 * A key is used with one family of operations only: plain values (get/set/setIfAbsent/delete),
 * window counters (incrementWindow/readWindow/delete), versioned values (getVersioned/
 * compareAndSwap/delete) or time indexes (index*). Mixing families on one key is undefined.
 */

/** Logical key: rendered `<prefix>:<kind>:{<namespace>:<tenant>}:<id>` (see keys.ts). */
export interface StateKey {
  kind: string;
  namespace: string;
  tenant: string;
  id: string;
}

export interface SetOptions {
  /** Expire the key this many ms after the write. Absent: no expiry. */
  ttlMs?: number;
}

export interface WindowOptions {
  /** Lifetime of the window, counted from the increment that creates the counter (first hit). */
  windowMs: number;
  /** When set, an increment that would take the count above it is refused and changes nothing. */
  limit?: number;
  /** Amount to add; default 1. */
  by?: number;
}

export interface WindowCount {
  /** The count after this call (unchanged when refused). */
  count: number;
  /** False when `limit` was given and the increment was refused. */
  allowed: boolean;
  /** Epoch ms at which the window (and its count) ends. */
  resetAtMs: number;
}

export interface Versioned {
  value: string;
  /** Starts at 1 on the first write and grows by one with every successful write. */
  version: number;
}

export interface CasResult {
  ok: boolean;
  /** The version now stored: the new one on success, the current one (0 = absent) on failure. */
  version: number;
}

export interface IndexEntry {
  member: string;
  score: number;
}

export interface ScanOptions {
  namespace?: string;
  tenant?: string;
  /** Opaque cursor from a previous page; absent for the first page. */
  cursor?: string;
  /** Page size hint (default 100). Pages may be shorter or, on Redis, slightly longer. */
  count?: number;
}

export interface ScanPage {
  entries: { key: StateKey; value: string }[];
  /** Null when the scan is complete. */
  cursor: string | null;
}

export type Unsubscribe = () => Promise<void>;

export interface StateStore {
  readonly backend: 'memory' | 'redis';

  get(key: StateKey): Promise<string | null>;
  set(key: StateKey, value: string, opts?: SetOptions): Promise<void>;
  /** True when a key was deleted. Works for every key family. */
  delete(key: StateKey): Promise<boolean>;
  /** Writes only when the key does not exist; true when this call wrote it. */
  setIfAbsent(key: StateKey, value: string, opts?: SetOptions): Promise<boolean>;

  /** Fixed-window counter: creates the window on first hit; refused attempts neither count nor extend it. */
  incrementWindow(key: StateKey, opts: WindowOptions): Promise<WindowCount>;
  /** Current count of a window counter; count 0 and resetAtMs null when no window is open. */
  readWindow(key: StateKey): Promise<{ count: number; resetAtMs: number | null }>;

  getVersioned(key: StateKey): Promise<Versioned | null>;
  /** Writes when the stored version equals `expectedVersion` (0 = must be absent). */
  compareAndSwap(key: StateKey, expectedVersion: number, value: string, opts?: SetOptions): Promise<CasResult>;

  /** Adds or moves a member of a time-ordered index (score = epoch ms, usually). */
  indexAdd(index: StateKey, member: string, score: number): Promise<void>;
  indexRemove(index: StateKey, member: string): Promise<boolean>;
  /** Atomically removes and returns up to `limit` members with score <= maxScore, lowest first. */
  indexPopDue(index: StateKey, maxScore: number, limit: number): Promise<IndexEntry[]>;

  /** Pages through the plain values of one kind, optionally within a namespace/tenant scope. */
  scan(kind: string, opts?: ScanOptions): Promise<ScanPage>;

  /** Fire-and-forget broadcast to every subscriber of `channel` in every process. */
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, handler: (message: string) => void): Promise<Unsubscribe>;

  /** True when the backend answers (readiness). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
