import { RETENTION_REAP_KIND, scheduleRetentionReaper, type Runtime } from '@sluice/gateway';
import { RECURRING_FIRE_KIND } from '@sluice/gateway';
import { GROUP_SWEEP_KIND, scheduleGroupSweep } from '@sluice/gateway';
import { JOB_KINDS, type JobKindDefinition } from './job-topology.js';
import { instrumentJob } from './run-job.js';

/**
 * Registers a consumer for each job kind and starts consuming. In memory mode this runs inside
 * `sluice serve` on the in-process scheduler; in Redis mode inside `sluice worker` (or a
 * `serve` without --no-worker) on BullMQ.
 */
export async function startWorker(
  runtime: Runtime,
  kinds: Readonly<Record<string, JobKindDefinition>> = JOB_KINDS,
): Promise<string[]> {
  const names = Object.keys(kinds);
  for (const kind of names) {
    const def = kinds[kind] as JobKindDefinition;
    const handler = instrumentJob(kind, (job) => def.handler(runtime, job), runtime);
    runtime.scheduler.consume(kind, handler, { concurrency: def.concurrency });
  }
  // Declared by every process that consumes jobs; one repeatable job with a fixed id, so one worker runs each cycle.
  if (RETENTION_REAP_KIND in kinds) await scheduleRetentionReaper(runtime.scheduler, runtime.config.background);
  // BullMQ may have lost the recurring schedules (a new or flushed Redis): re-declare one per enabled action from state.
  if (RECURRING_FIRE_KIND in kinds) await runtime.recurring.declareAll();
  // The backstop for group flushes whose enqueue died with a process (one schedule id, one worker per sweep).
  if (GROUP_SWEEP_KIND in kinds) await scheduleGroupSweep(runtime.scheduler);
  await runtime.scheduler.start();
  return names;
}
