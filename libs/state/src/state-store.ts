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
  /**
   * Applies only to the window an earlier call reported ending at this instant (its resetAtMs);
   * when that window has ended, whether or not another has opened since, nothing changes and the
   * call answers allowed: false. A window opened later ends at least a whole window later, so
   * half a window tells them apart whatever the rounding of the two reports.
   */
  windowEndsAtMs?: number;
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

/** What indexAddBounded did: added the member, found it there already (unchanged), or found the index full. */
export type BoundedAddResult = 'added' | 'present' | 'full';

export interface IndexRangeQuery {
  /** Inclusive score bounds; absent = unbounded. */
  min?: number;
  max?: number;
  /** Highest score first (ties: members in reverse byte order). Default false: lowest first. */
  rev?: boolean;
  /** Entries to skip within the range, then at most `limit` returned. */
  offset?: number;
  limit: number;
}

/**
 * One write of a batch. Counters are plain integer values (INCRBY), created at 0; `ttlMs` on a
 * counter or index is set when the key has no expiry yet (so later writes never shorten or
 * extend it); on `set` it replaces the expiry as `set` does.
 */
export type WriteOp =
  | { op: 'set'; key: StateKey; value: string; ttlMs?: number }
  /**
   * ZADD. `fixedScore`: the writer never gives this member another score (the audit trail's index
   * entries), so the memory backend may keep the index without a member → score map and find
   * entries by score; Redis ignores it. A member re-added with another score breaks that promise.
   */
  | { op: 'indexAdd'; index: StateKey; member: string; score: number; ttlMs?: number; fixedScore?: true }
  | { op: 'increment'; key: StateKey; by: number; ttlMs?: number }
  /** ZREM; writeBatch only (compareAndSwapWith refuses it). */
  | { op: 'indexRemove'; index: StateKey; member: string; ttlMs?: undefined; score?: number }
  /** DEL, of any key family; writeBatch only (compareAndSwapWith refuses it). */
  | { op: 'delete'; key: StateKey; ttlMs?: undefined };

/** Counters and index entries: writes whose bulk application (grouped by key) is the same as one by one. */
export type BulkWriteOp = Extract<WriteOp, { op: 'increment' | 'indexAdd' | 'indexRemove' }>;

export interface WriteBatchOptions {
  /**
   * A message appended to a log after the writes, in the same round trip. The log is never
   * trimmed by it: a consumer group deletes what it acknowledges (logGroupAckWith).
   */
  append?: { log: StateKey; message: string };
}

/** One entry of a log: its id (`<ms>-<seq>`, increasing) and message. */
export interface LogEntry {
  id: string;
  message: string;
}

/** A message handed to a consumer of a group: `deliveries` counts the times it was handed out (1 the first time). */
export interface LogDelivery extends LogEntry {
  deliveries: number;
}

export interface StateStore {
  readonly backend: 'memory' | 'redis';
  /**
   * True on a Redis Cluster: keys of different scopes (hash tags) may live on different nodes, so
   * a key every replica writes (a shared log) spreads its load when split over several scopes.
   */
  readonly sharded: boolean;
  /**
   * Memory backend only: characters of the string and hash values held under keys of `kind`, in
   * O(1), for stores capped by size (the in-process audit trail). Redis counts its own memory.
   */
  storedBytes?(kind: string): number;
  /** Memory backend only: storedBytes for every kind holding any (`sluice_memory_store_bytes`). */
  storedBytesByKind?(): ReadonlyMap<string, number>;

  get(key: StateKey): Promise<string | null>;
  set(key: StateKey, value: string, opts?: SetOptions): Promise<void>;
  /** True when a key was deleted. Works for every key family. */
  delete(key: StateKey): Promise<boolean>;
  /** Writes only when the key does not exist; true when this call wrote it. */
  setIfAbsent(key: StateKey, value: string, opts?: SetOptions): Promise<boolean>;
  /** Deletes a plain value only while it holds `value` (give back a claim without removing a later one); true when deleted. */
  deleteIfValue(key: StateKey, value: string): Promise<boolean>;

  /** Fixed-window counter: creates the window on first hit; refused attempts neither count nor extend it. */
  incrementWindow(key: StateKey, opts: WindowOptions): Promise<WindowCount>;
  /** Current count of a window counter; count 0 and resetAtMs null when no window is open. */
  readWindow(key: StateKey): Promise<{ count: number; resetAtMs: number | null }>;

  getVersioned(key: StateKey): Promise<Versioned | null>;
  /** Writes when the stored version equals `expectedVersion` (0 = must be absent). */
  compareAndSwap(key: StateKey, expectedVersion: number, value: string, opts?: SetOptions): Promise<CasResult>;

  /** Adds or moves a member of a time-ordered index (score = epoch ms, usually). */
  indexAdd(index: StateKey, member: string, score: number): Promise<void>;
  /**
   * Adds `member` only while the index holds fewer than `maxMembers` members: one atomic step,
   * so N writers racing for the last slot get one 'added'. A member already in the index is left
   * as it is, score included ('present'), whatever the count. An exclusive claim is maxMembers 1.
   */
  indexAddBounded(index: StateKey, member: string, score: number, maxMembers: number): Promise<BoundedAddResult>;
  /**
   * ZREM. `score`, when the caller knows the member's score, lets the memory backend find an entry
   * of a fixed-score index (WriteOp indexAdd) without scanning; Redis ignores it. The member is
   * removed whatever its score.
   */
  indexRemove(index: StateKey, member: string, score?: number): Promise<boolean>;
  /** Removes `member` only while its score is still `score` (a claim taken at that instant, not one taken again since). */
  indexRemoveIf(index: StateKey, member: string, score: number): Promise<boolean>;
  /** Atomically removes and returns up to `limit` members with score <= maxScore, lowest first. */
  indexPopDue(index: StateKey, maxScore: number, limit: number): Promise<IndexEntry[]>;
  /** Members with scores in [min, max], ordered by score, paged by offset/limit. */
  indexRange(index: StateKey, query: IndexRangeQuery): Promise<IndexEntry[]>;
  /** Number of members with scores in [min, max] (absent bounds: unbounded). */
  indexCount(index: StateKey, min?: number, max?: number): Promise<number>;
  /** Removes every member with a score in [min, max]; returns how many. */
  indexRemoveRange(index: StateKey, min: number, max: number): Promise<number>;

  /** Plain values (or counters, as decimal strings) of many keys in one round trip; null where absent. */
  getMany(keys: readonly StateKey[]): Promise<(string | null)[]>;
  /**
   * Applies the writes in one round trip, in order. Not atomic across keys (a crash may apply a
   * prefix): readers must tolerate an index entry whose value is missing. Resolves once the
   * backend has applied every write (and appended the message, when asked).
   */
  writeBatch(ops: readonly WriteOp[], opts?: WriteBatchOptions): Promise<void>;
  /**
   * compareAndSwap plus further writes, all or nothing: the writes are applied only when the
   * swap succeeds. Every key involved must share the CAS key's namespace and tenant (one Redis
   * Cluster slot).
   */
  compareAndSwapWith(key: StateKey, expectedVersion: number, value: string, writes: readonly WriteOp[]): Promise<CasResult>;

  /** Pages through the plain values of one kind, optionally within a namespace/tenant scope. */
  scan(kind: string, opts?: ScanOptions): Promise<ScanPage>;

  /**
   * Appends to a log (a Redis Stream; the message bus's topics) and returns the entry's id,
   * greater than every earlier one. The log keeps about the newest `maxLen` entries (Redis trims
   * approximately, in whole nodes; memory exactly).
   */
  logAppend(log: StateKey, message: string, maxLen: number): Promise<string>;
  /** Entries after `afterId` (exclusive; absent: from the oldest), oldest first, at most `limit`. */
  logRange(log: StateKey, opts: { afterId?: string; limit: number }): Promise<LogEntry[]>;
  logLength(log: StateKey): Promise<number>;
  /** Removes these entries (XDEL); returns how many there were. A consumer group's pending ones are dropped when claimed. */
  logRemove(log: StateKey, ids: readonly string[]): Promise<number>;
  /**
   * Consumer groups (Redis Streams XGROUP/XREADGROUP/XAUTOCLAIM/XACK): each message of the log
   * goes to one consumer of the group and stays pending until acknowledged. Creating a group that
   * exists is false; `from` is where it starts: the log's end (new messages only) or its start.
   */
  logGroupCreate(log: StateKey, group: string, from: 'start' | 'end'): Promise<boolean>;
  /** Up to `count` messages never delivered to the group, now pending for `consumer`. Throws NOGROUP for a missing group. */
  logGroupRead(log: StateKey, group: string, consumer: string, count: number): Promise<LogDelivery[]>;
  /**
   * Up to `count` pending messages idle at least `minIdleMs`, handed to `consumer` (each delivery
   * count grows by one): its own too, unless `othersOnly` (those of other consumers only). On a
   * Redis Cluster it first finishes acknowledgements staged that long ago by a consumer that died
   * before applying them (see logGroupAckWith).
   */
  logGroupClaim(log: StateKey, group: string, consumer: string, minIdleMs: number, count: number, opts?: { othersOnly?: boolean }): Promise<LogDelivery[]>;
  /** Acknowledges pending messages; returns how many were pending. */
  logGroupAck(log: StateKey, group: string, ids: readonly string[]): Promise<number>;
  /**
   * Applies `writes` and acknowledges and deletes the messages `ids` in one atomic step, only
   * while every one of them is still pending for `consumer` (none acknowledged, none claimed by
   * another consumer since): false, with nothing written, otherwise. So a batch handed out twice
   * (its consumer stalled past a claim) is applied once. A write that fails (wrong key type) does
   * not stop the others; their count is returned in `failed`. On a Redis Cluster, where the writes
   * span slots, the acknowledgement and the writes are two steps: the batch is staged with the
   * acknowledgement, then applied once per slot; a batch staged by a consumer that died in
   * between is applied by a later logGroupClaim (docs/cluster.md#redis-cluster).
   */
  logGroupAckWith(
    log: StateKey,
    group: string,
    consumer: string,
    ids: readonly string[],
    writes: readonly BulkWriteOp[],
  ): Promise<{ applied: boolean; failed: number }>;
  /** Forgets a consumer of a group (a process that stops), only while it holds no pending message; true when gone. */
  logGroupRemoveConsumer(log: StateKey, group: string, consumer: string): Promise<boolean>;
  /**
   * Forgets the consumers of a group that hold no pending message and have been idle at least
   * `minIdleMs` (on Redis before 7.2: that long without receiving a message): those of processes
   * that died without forgetting themselves. A live consumer forgotten this way is created again
   * by its next delivery. At most 1,000 per call; returns how many were forgotten.
   */
  logGroupForgetIdle(log: StateKey, group: string, minIdleMs: number): Promise<number>;
  /** The id of the newest message still in the log; null when it is empty. */
  logLastId(log: StateKey): Promise<string | null>;
  /** `pending`: delivered and not acknowledged; `undelivered`: in the log, not yet handed to the group. */
  logGroupLag(log: StateKey, group: string): Promise<{ pending: number; undelivered: number }>;

  /** Fire-and-forget broadcast to every subscriber of `channel` in every process. */
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, handler: (message: string) => void): Promise<Unsubscribe>;

  /** True when the backend answers (readiness), within `timeoutMs` when given (else the store's own deadline). */
  ping(timeoutMs?: number): Promise<boolean>;
  /**
   * False while the connection to the backend is known to be down: a dispatch refuses to start
   * (503) rather than execute an action it could not record. No round trip; true in memory.
   */
  available(): boolean;
  /** Calls `listener` each time the connection comes back after a loss (not on the first connect); returns the unsubscribe. */
  onReconnected(listener: () => void): () => void;
  /**
   * Calls `listener` once each time a connection that was up is lost, with the last connection
   * error if any and the address it was connected to (`host:port`; for a Cluster, none: its nodes
   * come and go one by one); returns the unsubscribe.
   */
  onConnectionLost(listener: (cause: unknown, address: string | undefined) => void): () => void;
  close(): Promise<void>;
}
