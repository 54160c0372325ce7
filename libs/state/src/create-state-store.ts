import type { Clock } from '@sluice/core';
import type { KeyspaceLimits } from './memory/memory-keyspace.js';
import { MemoryStateStore } from './memory/memory-state-store.js';
import type { RedisTarget } from './redis/connection.js';
import type { ReplicaWait } from './redis/replica-wait.js';
import type { StateStore } from './state-store.js';

/** Redis (`url`, `clusterNodes` or `sentinels`: one is required) or memory. */
export interface CreateStateStoreOptions extends RedisTarget {
  backend: 'memory' | 'redis';
  /** Key and channel prefix (redis); memory keeps its keys in-process and ignores it. */
  prefix: string;
  /** Memory only: Redis windows and TTLs run on server time. */
  clock?: Clock;
  /** Memory only. */
  sweepIntervalMs?: number;
  /** Memory only: what the process may hold outside the kinds that bound themselves (state.memory_max_keys, memory_max_bytes). */
  memoryLimits?: KeyspaceLimits;
  /** Redis only: how long to wait for the first connection (default 5000). */
  connectTimeoutMs?: number;
  clientName?: string;
  /** Called when a subscribe handler throws (default: process.emitWarning, plain text on stderr). */
  onHandlerError?: (channel: string, err: unknown) => void;
  /** Redis only: writes that must survive a failover wait for replicas (state.wait_replicas). */
  waitReplicas?: ReplicaWait;
  /** Redis only: run on a Redis whose maxmemory-policy may evict keys (state.allow_eviction). */
  allowEviction?: boolean;
}

/** The configured StateStore; for redis, resolves only once Redis answers (else throws naming the URL). */
export async function createStateStore(opts: CreateStateStoreOptions): Promise<StateStore> {
  if (opts.backend === 'memory') {
    return new MemoryStateStore({ clock: opts.clock, sweepIntervalMs: opts.sweepIntervalMs, onHandlerError: opts.onHandlerError, limits: opts.memoryLimits });
  }
  // Loaded here so that the memory backend never loads ioredis.
  const { RedisStateStore } = await import('./redis/redis-state-store.js');
  return RedisStateStore.connect({
    ...redisTarget(opts, 'state backend "redis"'),
    prefix: opts.prefix,
    connectTimeoutMs: opts.connectTimeoutMs,
    clientName: opts.clientName,
    onHandlerError: opts.onHandlerError,
    waitReplicas: opts.waitReplicas,
    allowEviction: opts.allowEviction,
  });
}

/** Only the target's own fields (a single primary, a Cluster or Sentinels, and the command timeout), for passing on; throws naming `user` when there is none. */
export function redisTarget(opts: RedisTarget, user: string): RedisTarget {
  const { url, clusterNodes, sentinels, sentinelName, password, sentinelPassword, commandTimeoutMs } = opts;
  if (clusterNodes !== undefined) return { clusterNodes, password, commandTimeoutMs };
  if (sentinels !== undefined) return { sentinels, sentinelName, password, sentinelPassword, commandTimeoutMs };
  if (!url) throw new Error(`${user} needs a Redis URL, cluster nodes or sentinels`);
  return { url, password, commandTimeoutMs };
}
