import type { Clock } from '@sluice/core';
import { MemoryStateStore } from './memory/memory-state-store.js';
import type { StateStore } from './state-store.js';

export interface CreateStateStoreOptions {
  backend: 'memory' | 'redis';
  /** Required for redis. */
  url?: string;
  /** Key and channel prefix (redis); memory keeps its keys in-process and ignores it. */
  prefix: string;
  /** Memory only: Redis windows and TTLs run on server time. */
  clock?: Clock;
  /** Memory only. */
  sweepIntervalMs?: number;
  /** Redis only: how long to wait for the first connection (default 5000). */
  connectTimeoutMs?: number;
  clientName?: string;
  /** Called when a subscribe handler throws (default: process.emitWarning, plain text on stderr). */
  onHandlerError?: (channel: string, err: unknown) => void;
}

/** The configured StateStore; for redis, resolves only once Redis answers (else throws naming the URL). */
export async function createStateStore(opts: CreateStateStoreOptions): Promise<StateStore> {
  if (opts.backend === 'memory') {
    return new MemoryStateStore({ clock: opts.clock, sweepIntervalMs: opts.sweepIntervalMs, onHandlerError: opts.onHandlerError });
  }
  if (!opts.url) throw new Error('state backend "redis" needs a Redis URL');
  // Loaded here so that the memory backend never loads ioredis.
  const { RedisStateStore } = await import('./redis/redis-state-store.js');
  return RedisStateStore.connect({
    url: opts.url,
    prefix: opts.prefix,
    connectTimeoutMs: opts.connectTimeoutMs,
    clientName: opts.clientName,
    onHandlerError: opts.onHandlerError,
  });
}
