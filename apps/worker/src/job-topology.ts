import type { Job } from '@sluice/state';
import { RETENTION_REAP_KIND, type Runtime } from '@sluice/gateway';

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
};
