import type { Clock } from '@sluice/core';
import type { BackgroundErrorHandler } from './error-reports.js';
import type { Scheduler } from './scheduler.js';
import { InProcessScheduler } from './memory/in-process-scheduler.js';

export interface CreateSchedulerOptions {
  backend: 'memory' | 'redis';
  /** Redis URL; required for the redis backend. */
  url?: string;
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
  if (!opts.url) throw new Error('the redis scheduler backend needs a url');
  const { BullMqScheduler } = await import('./bullmq/bullmq-scheduler.js');
  return new BullMqScheduler({
    url: opts.url,
    prefix: opts.prefix,
    ...(opts.lockDurationMs !== undefined && { lockDurationMs: opts.lockDurationMs }),
    ...(opts.stalledIntervalMs !== undefined && { stalledIntervalMs: opts.stalledIntervalMs }),
    ...(opts.onError !== undefined && { onError: opts.onError }),
  });
}
