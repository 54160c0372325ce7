import type { Job } from '@sluice/state';
import { RETENTION_REAP_KIND, type Runtime } from '@sluice/gateway';
import { STATE_TIMEOUT_KIND, runStateTimeoutJob } from '@sluice/gateway';
import { RECURRING_FIRE_KIND } from '@sluice/gateway';
import { GROUP_FLUSH_KIND, GROUP_SWEEP_GRACE_MS, GROUP_SWEEP_KIND } from '@sluice/gateway';

/**
 * Every background job kind, in one table. The key is the durable queue name: NEVER rename one
 * without a migration (jobs already in Redis would be orphaned). Each feature that runs work on
 * the worker (group flushes, state-machine timeouts, recurring actions, chain steps, approval
 * expiry, retention reaping) adds its entry here; the handler calls one lib function.
 */
export interface JobKindDefinition {
  /** Parallel jobs of this kind per worker process. */
  concurrency: number;
  handler: (runtime: Runtime, job: Job) => Promise<void>;
}

export const JOB_KINDS: Readonly<Record<string, JobKindDefinition>> = {
  [RETENTION_REAP_KIND]: { concurrency: 1, handler: async (runtime) => void (await runtime.reaper.runCycle()) },
  [STATE_TIMEOUT_KIND]: { concurrency: 8, handler: (runtime, job) => runStateTimeoutJob(runtime.stateMachines, job) },
  [RECURRING_FIRE_KIND]: { concurrency: 4, handler: async (runtime, job) => void (await runtime.recurring.fire(job.data)) },
  [GROUP_FLUSH_KIND]: { concurrency: 8, handler: (runtime, job) => runtime.grouping.runFlushJob(job) },
  [GROUP_SWEEP_KIND]: { concurrency: 1, handler: async (runtime) => void (await runtime.grouping.sweep(GROUP_SWEEP_GRACE_MS)) },
};
