import { setTimeout as delay } from 'node:timers/promises';
import type { Runtime } from '@sluice/gateway';
import { instrumentJob } from './run-job.js';

/**
 * Registers a consumer for every job kind the runtime's features declare, has each feature
 * declare its schedules and start its background loops (the audit indexer), and starts consuming. In memory mode this runs inside `sluice serve`
 * on the in-process scheduler; in Redis mode inside `sluice worker` (or a `serve` without
 * --no-worker) on BullMQ. Returns the kinds consumed.
 */
export async function startConsumers(runtime: Runtime): Promise<string[]> {
  const env = { gateway: runtime.gateway };
  const kinds = Object.keys(runtime.jobs);
  for (const [kind, def] of Object.entries(runtime.jobs)) {
    const handler = instrumentJob(kind, (job) => def.handler(job, env), runtime);
    runtime.scheduler.consume(kind, handler, { concurrency: def.concurrency });
  }
  await runtime.declareSchedules();
  runtime.startBackground();
  // A Redis that restarted empty lost the repeatable jobs (reaper, sweeps, recurring actions):
  // declaring is idempotent, so every reconnect declares them again.
  const log = runtime.logger.child({ component: 'worker' });
  runtime.state.onReconnected(() => void declareAgain(runtime, log));
  await runtime.scheduler.start();
  return kinds;
}

/** Declares the schedules after a reconnect, retrying (1, 2, 4… up to 30 s apart) while the queue's own connection is not back yet. */
async function declareAgain(runtime: Runtime, log: Runtime['logger']): Promise<void> {
  for (let attempt = 0, waitMs = 1000; ; attempt++, waitMs = Math.min(waitMs * 2, 30_000)) {
    try {
      await runtime.declareSchedules();
      log.info({ attempt }, 'state backend reconnected; schedules declared again');
      return;
    } catch (err) {
      if (!runtime.state.available()) return; // lost again: the next reconnect declares them
      log.warn({ err, retry_in_ms: waitMs }, 'state backend reconnected; declaring schedules failed');
      await delay(waitMs);
    }
  }
}
