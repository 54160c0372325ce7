import { parseKey, renderKey } from '../keys.js';
import { warnHandlerError } from '../subscriber-errors.js';
import type {
  BoundedAddResult,
  BulkWriteOp,
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
import { coalesceCommands } from './write-coalescing.js';
import { writeBatch } from './batch.js';
import { finishStagedBatches, logAckWith, type MarkerKey } from './log-ack-with.js';
import { compareAndSwapWith } from './compare-and-swap-with.js';
import { closeClient, createClient, isCluster, pingWithin, waitUntilReady, type RedisClient, type RedisConnectionOptions } from './connection.js';
import * as ranges from './index-range.js';
import * as logs from './logs.js';
import { assertNoEviction } from './eviction-policy.js';
import { RedisPubSub } from './pubsub.js';
import { ReplicaWaiter, type ReplicaWait } from './replica-wait.js';
import { scanKind } from './scan.js';
import { logGroupForgetIdleScript, logGroupRemoveConsumerScript } from './lua/index.js';
import { registerScripts, runScript } from './scripts.js';
import * as index from './time-index.js';
import * as values from './values.js';
import * as versioned from './versioned.js';
import * as windows from './window-counter.js';

export interface RedisStateStoreOptions extends RedisConnectionOptions {
  /** Key and channel prefix; see keys.ts. */
  prefix: string;
  /** Deadline of ping() (default 1000). */
  pingTimeoutMs?: number;
  /** Called when a subscribe handler throws; default: process.emitWarning. */
  onHandlerError?: (channel: string, err: unknown) => void;
  /**
   * Writes that decide an outcome and must survive a failover (setIfAbsent: dedup keys and locks;
   * compareAndSwap and compareAndSwapWith: approvals, chains, records; incrementWindow: quotas and
   * throttles) are answered only once this many replicas have them, or the timeout passed.
   */
  waitReplicas?: ReplicaWait | undefined;
  /** connect() refuses a Redis that may evict keys unless this is true (state.allow_eviction). */
  allowEviction?: boolean | undefined;
}

/**
 * The Redis StateStore. Each atomic multi-step operation is one Lua script (lua/*.ts), the
 * rest are single commands; the semantics are those of state-store.ts, shared with the memory
 * backend through the contract suite. The store owns its connections: close() ends both.
 */
/** Consumers one logGroupForgetIdle removes at most: a pile of 100,000 held Redis 0.4 s in one script. */
const FORGET_AT_MOST = 1000;

export class RedisStateStore implements StateStore {
  readonly backend = 'redis' as const;
  readonly client: RedisClient;
  readonly sharded: boolean;
  private readonly prefix: string;
  private readonly pubsub: RedisPubSub;
  private readonly pingTimeoutMs: number;
  /** With state.wait_replicas, the writes that wait for replicas use a connection of their own (WAIT blocks its connection). */
  private readonly durable: RedisClient;
  private readonly replicaWaiter: ReplicaWaiter | undefined;
  private lastError: unknown;

  /** Connects in the background; use RedisStateStore.connect() to wait until Redis answers. */
  constructor(opts: RedisStateStoreOptions) {
    this.prefix = opts.prefix;
    this.pingTimeoutMs = opts.pingTimeoutMs ?? 1000;
    this.client = createClient(opts);
    this.sharded = isCluster(this.client);
    // Keep the latest error of this outage for diagnostics; a listener also stops ioredis printing each retry.
    this.client.on('error', (err: unknown) => {
      this.lastError = err;
    });
    this.client.on('ready', () => {
      this.lastError = undefined;
    });
    registerScripts(this.client);
    coalesceCommands(this.client);
    if (opts.waitReplicas !== undefined && opts.waitReplicas.replicas > 0) {
      // WAIT blocks for up to its own timeout before it answers: the command timeout comes on top.
      this.durable = createClient(
        { ...opts, clientName: opts.clientName === undefined ? undefined : `${opts.clientName}-durable` },
        { extraTimeoutMs: opts.waitReplicas.timeoutMs },
      );
      this.durable.on('error', () => {});
      registerScripts(this.durable);
      coalesceCommands(this.durable);
      this.replicaWaiter = new ReplicaWaiter(this.durable, opts.waitReplicas);
    } else {
      this.durable = this.client;
    }
    this.pubsub = new RedisPubSub(this.client, this.prefix, opts.onHandlerError ?? warnHandlerError);
  }

  /** Creates a store and waits until Redis is ready; throws an error naming the URL if not, or when Redis may evict keys. */
  static async connect(opts: RedisStateStoreOptions): Promise<RedisStateStore> {
    const store = new RedisStateStore(opts);
    try {
      await waitUntilReady(store.client, opts, opts.connectTimeoutMs ?? 5000);
      await assertNoEviction(store.client, opts.allowEviction ?? false);
    } catch (err) {
      await store.close();
      throw err;
    }
    return store;
  }

  /** The most recent connection error, if any (for readiness diagnostics). */
  get lastConnectionError(): unknown {
    return this.lastError;
  }

  get(key: StateKey): Promise<string | null> {
    return values.getValue(this.client, this.k(key));
  }

  set(key: StateKey, value: string, opts?: SetOptions): Promise<void> {
    return values.setValue(this.client, this.k(key), value, opts);
  }

  delete(key: StateKey): Promise<boolean> {
    return values.deleteKey(this.client, this.k(key));
  }

  setIfAbsent(key: StateKey, value: string, opts?: SetOptions): Promise<boolean> {
    const k = this.k(key);
    return this.replicated(k, values.setValueIfAbsent(this.durable, k, value, opts));
  }

  deleteIfValue(key: StateKey, value: string): Promise<boolean> {
    return values.deleteIfValue(this.client, this.k(key), value);
  }

  incrementWindow(key: StateKey, opts: WindowOptions): Promise<WindowCount> {
    const k = this.k(key);
    return this.replicated(k, windows.incrementWindow(this.durable, k, opts));
  }

  readWindow(key: StateKey): Promise<{ count: number; resetAtMs: number | null }> {
    return windows.readWindow(this.client, this.k(key));
  }

  getVersioned(key: StateKey): Promise<Versioned | null> {
    return versioned.getVersioned(this.client, this.k(key));
  }

  compareAndSwap(key: StateKey, expectedVersion: number, value: string, opts?: SetOptions): Promise<CasResult> {
    const k = this.k(key);
    return this.replicated(k, versioned.compareAndSwap(this.durable, k, expectedVersion, value, opts));
  }

  indexAdd(indexKey: StateKey, member: string, score: number): Promise<void> {
    return index.indexAdd(this.client, this.k(indexKey), member, score);
  }

  indexAddBounded(indexKey: StateKey, member: string, score: number, maxMembers: number): Promise<BoundedAddResult> {
    return index.indexAddBounded(this.client, this.k(indexKey), member, score, maxMembers);
  }

  indexRemove(indexKey: StateKey, member: string): Promise<boolean> {
    return index.indexRemove(this.client, this.k(indexKey), member);
  }

  indexRemoveIf(indexKey: StateKey, member: string, score: number): Promise<boolean> {
    return index.indexRemoveIf(this.client, this.k(indexKey), member, score);
  }

  indexPopDue(indexKey: StateKey, maxScore: number, limit: number): Promise<IndexEntry[]> {
    return index.indexPopDue(this.client, this.k(indexKey), maxScore, limit);
  }

  indexRange(indexKey: StateKey, query: IndexRangeQuery): Promise<IndexEntry[]> {
    return ranges.indexRange(this.client, this.k(indexKey), query);
  }

  indexCount(indexKey: StateKey, min?: number, max?: number): Promise<number> {
    return ranges.indexCount(this.client, this.k(indexKey), min, max);
  }

  indexRemoveRange(indexKey: StateKey, min: number, max: number): Promise<number> {
    return ranges.indexRemoveRange(this.client, this.k(indexKey), min, max);
  }

  getMany(keys: readonly StateKey[]): Promise<(string | null)[]> {
    return values.getValues(
      this.client,
      keys.map((key) => this.k(key)),
    );
  }

  writeBatch(ops: readonly WriteOp[], opts: WriteBatchOptions = {}): Promise<void> {
    const render = (key: StateKey) => this.k(key);
    const append = opts.append === undefined ? undefined : { log: render(opts.append.log), message: opts.append.message };
    return writeBatch(this.client, ops, render, append);
  }

  compareAndSwapWith(key: StateKey, expectedVersion: number, value: string, writes: readonly WriteOp[]): Promise<CasResult> {
    return this.replicated(
      this.k(key),
      compareAndSwapWith(this.durable, key, expectedVersion, value, writes, (k) => this.k(k)),
    );
  }

  scan(kind: string, opts?: ScanOptions): Promise<ScanPage> {
    return scanKind(this.client, this.prefix, kind, opts);
  }

  logAppend(log: StateKey, message: string, maxLen: number): Promise<string> {
    return logs.logAppend(this.client, this.k(log), message, maxLen);
  }

  logRange(log: StateKey, opts: { afterId?: string; limit: number }): Promise<LogEntry[]> {
    return logs.logRange(this.client, this.k(log), opts);
  }

  logLength(log: StateKey): Promise<number> {
    return this.client.xlen(this.k(log));
  }

  async logRemove(log: StateKey, ids: readonly string[]): Promise<number> {
    return ids.length === 0 ? 0 : this.client.xdel(this.k(log), ...ids);
  }

  logGroupCreate(log: StateKey, group: string, from: 'start' | 'end'): Promise<boolean> {
    return logs.groupCreate(this.client, this.k(log), group, from);
  }

  logGroupRead(log: StateKey, group: string, consumer: string, count: number): Promise<LogDelivery[]> {
    return logs.groupRead(this.client, this.k(log), group, consumer, count);
  }

  async logGroupClaim(
    log: StateKey,
    group: string,
    consumer: string,
    minIdleMs: number,
    count: number,
    opts?: { othersOnly?: boolean },
  ): Promise<LogDelivery[]> {
    // Redis Cluster: a consumer that died mid-acknowledgement left a staged batch; finish it first.
    await finishStagedBatches(this.client, this.k(log), minIdleMs, this.marker);
    if (opts?.othersOnly === true) return logs.groupClaimFromOthers(this.client, this.k(log), group, consumer, minIdleMs, count);
    return logs.groupClaim(this.client, this.k(log), group, consumer, minIdleMs, count);
  }

  logGroupAck(log: StateKey, group: string, ids: readonly string[]): Promise<number> {
    return logs.groupAck(this.client, this.k(log), group, ids);
  }

  logGroupAckWith(
    log: StateKey,
    group: string,
    consumer: string,
    ids: readonly string[],
    writes: readonly BulkWriteOp[],
  ): Promise<{ applied: boolean; failed: number }> {
    return logAckWith(this.client, this.k(log), group, consumer, ids, writes, (key) => this.k(key), this.marker);
  }

  async logGroupRemoveConsumer(log: StateKey, group: string, consumer: string): Promise<boolean> {
    return (await runScript(this.client, logGroupRemoveConsumerScript, { keys: [this.k(log)], args: [group, consumer] })) === 1;
  }

  async logGroupForgetIdle(log: StateKey, group: string, minIdleMs: number): Promise<number> {
    const args = [group, String(Math.max(0, Math.floor(minIdleMs))), String(FORGET_AT_MOST)];
    return Number(await runScript(this.client, logGroupForgetIdleScript, { keys: [this.k(log)], args }));
  }

  async logLastId(log: StateKey): Promise<string | null> {
    const [last] = await this.client.xrevrange(this.k(log), '+', '-', 'COUNT', 1);
    return last?.[0] ?? null;
  }

  logGroupLag(log: StateKey, group: string): Promise<{ pending: number; undelivered: number }> {
    return logs.groupLag(this.client, this.k(log), group);
  }

  publish(channel: string, message: string): Promise<void> {
    return this.pubsub.publish(channel, message);
  }

  subscribe(channel: string, handler: (message: string) => void): Promise<Unsubscribe> {
    return this.pubsub.subscribe(channel, handler);
  }

  ping(timeoutMs = this.pingTimeoutMs): Promise<boolean> {
    return pingWithin(this.client, timeoutMs);
  }

  available(): boolean {
    return this.client.status === 'ready';
  }

  onReconnected(listener: () => void): () => void {
    let lost = false;
    const onLost = () => {
      lost = true;
    };
    const onReady = () => {
      if (!lost) return;
      lost = false;
      listener();
    };
    this.client.on('close', onLost);
    this.client.on('ready', onReady);
    return () => {
      this.client.off('close', onLost);
      this.client.off('ready', onReady);
    };
  }

  onConnectionLost(listener: (cause: unknown, address: string | undefined) => void): () => void {
    let up = this.client.status === 'ready';
    // Where it was connected (the Sentinels' primary of the moment, or the URL's host), read while up.
    let address = up ? connectedAddress(this.client) : undefined;
    const onReady = () => {
      up = true;
      address = connectedAddress(this.client);
    };
    // 'close' comes again at every failed reconnect: only the first after 'ready' is a loss.
    const onClose = () => {
      if (!up) return;
      up = false;
      listener(this.lastError, address);
    };
    this.client.on('ready', onReady);
    this.client.on('close', onClose);
    return () => {
      this.client.off('ready', onReady);
      this.client.off('close', onClose);
    };
  }

  async close(): Promise<void> {
    await this.pubsub.close();
    if (this.durable !== this.client) await closeClient(this.durable);
    await closeClient(this.client);
  }

  /** With state.wait_replicas: the write's answer once enough replicas have it (see ReplicaWait); without, the write itself (no extra hop on the hot path). */
  private replicated<T>(key: string, write: Promise<T>): Promise<T> {
    const waiter = this.replicaWaiter;
    if (waiter === undefined) return write;
    return write.then(async (answer) => {
      await waiter.afterWrite(key);
      return answer;
    });
  }

  /** A staged batch's marker in the slot of `key`: a key of the same namespace and tenant. */
  private readonly marker: MarkerKey = (key, batchId) => {
    const scope = parseKey(this.prefix, key);
    if (scope === null) throw new Error(`not a key of this store: ${key}`);
    return this.k({ kind: 'log-applied', namespace: scope.namespace, tenant: scope.tenant, id: batchId });
  };

  private k(key: StateKey): string {
    return renderKey(this.prefix, key);
  }
}

/** `host:port` of a single connection's peer (none for a Cluster, or before connecting). */
function connectedAddress(client: RedisClient): string | undefined {
  if (isCluster(client)) return undefined;
  const stream = client.stream as { remoteAddress?: string; remotePort?: number } | undefined;
  return stream?.remoteAddress === undefined ? undefined : `${stream.remoteAddress}:${stream.remotePort ?? ''}`;
}
