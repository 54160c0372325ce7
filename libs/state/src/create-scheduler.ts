import type { Clock } from '@sluice/core';
import type { BackgroundErrorHandler } from './error-reports.js';
import { redisTarget } from './create-state-store.js';
import type { RedisTarget } from './redis/connection.js';
import type { Scheduler } from './scheduler.js';
import { InProcessScheduler } from './memory/in-process-scheduler.js';

/** For the redis backend, one of `url`, `clusterNodes` or `sentinels` is required. */
export interface CreateSchedulerOptions extends RedisTarget {
  backend: 'memory' | 'redis';
  /** Deployment key prefix (BullMQ keys go under `{<prefix>}:bull`); unused in memory mode. */
  prefix: string;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** Drives the in-process scheduler's timers (default: the system clock); BullMQ keeps Redis and wall time. */
  clock?: Clock;
  /** Redis backend: connection and worker errors no call can return (rate-limited); default stderr. */
  onError?: BackgroundErrorHandler;
}

/**
 * The Scheduler for the configured state backend: in-process for memory, BullMQ for Redis.
 * Async because BullMQ is loaded only for Redis.
 */
export async function createScheduler(opts: CreateSchedulerOptions): Promise<Scheduler> {
  if (opts.backend === 'memory') return new InProcessScheduler({ clock: opts.clock });
  const { BullMqScheduler } = await import('./bullmq/bullmq-scheduler.js');
  return new BullMqScheduler({
    ...redisTarget(opts, 'the redis scheduler backend'),
    prefix: opts.prefix,
    ...(opts.lockDurationMs !== undefined && { lockDurationMs: opts.lockDurationMs }),
    ...(opts.stalledIntervalMs !== undefined && { stalledIntervalMs: opts.stalledIntervalMs }),
    ...(opts.onError !== undefined && { onError: opts.onError }),
  });
}
