import type { ChainRun, ChainRunStep, Clock } from '@sluice/core';
import type { Scheduler } from '@sluice/state';

/** Job kinds (durable BullMQ queue names: never rename). A step job runs or resumes one step; a timeout job fails an overdue run. */
export const CHAIN_STEP_KIND = 'chain-step';
export const CHAIN_TIMEOUT_KIND = 'chain-timeout';

export interface ChainJobData {
  namespace: string;
  tenant: string;
  chain_id: string;
  /** Step jobs: the step's index. */
  step?: number;
}

export function isChainJobData(data: unknown): data is ChainJobData {
  const d = data as Partial<ChainJobData> | null;
  return (
    typeof d?.namespace === 'string' && typeof d.tenant === 'string' && typeof d.chain_id === 'string' && (d.step === undefined || Number.isInteger(d.step))
  );
}

/**
 * Enqueues what a run's record says is due, under deterministic ids, so calling it again (a
 * retried job, a duplicate one) adds nothing: the current step's job when it has not started
 * (delayed by its `delay_seconds` from when the step before it ended), or, once a child run
 * has ended, its parent's resume job.
 */
export class ChainJobs {
  constructor(
    private readonly scheduler: Scheduler,
    private readonly clock: Clock,
  ) {}

  async due(run: ChainRun): Promise<void> {
    if (run.status === 'running') {
      const step = run.steps[run.current_step] as ChainRunStep | undefined;
      if (step?.status !== 'pending') return;
      const delayMs = (run.definition.steps[run.current_step]?.delay_seconds ?? 0) * 1000;
      const from = Date.parse(run.steps[run.current_step - 1]?.completed_at ?? run.started_at);
      await this.scheduler.enqueue(CHAIN_STEP_KIND, {
        id: `${run.id}:${run.current_step}:${step.attempt}`,
        data: { namespace: run.namespace, tenant: run.tenant, chain_id: run.id, step: run.current_step } satisfies ChainJobData,
        delayMs: Math.max(0, from + delayMs - this.clock.now()),
      });
      return;
    }
    if (run.parent_chain_id === null || run.parent_step === null) return;
    await this.scheduler.enqueue(CHAIN_STEP_KIND, {
      id: `${run.parent_chain_id}:${run.parent_step}:resume:${run.id}`,
      data: { namespace: run.namespace, tenant: run.tenant, chain_id: run.parent_chain_id, step: run.parent_step } satisfies ChainJobData,
    });
  }

  /** The job failing the run at its deadline (none without one). */
  async armTimeout(run: ChainRun): Promise<void> {
    if (run.deadline_at === null) return;
    await this.scheduler.enqueue(CHAIN_TIMEOUT_KIND, {
      id: run.id,
      data: { namespace: run.namespace, tenant: run.tenant, chain_id: run.id } satisfies ChainJobData,
      delayMs: Math.max(0, Date.parse(run.deadline_at) - this.clock.now()),
    });
  }

  /** A finished run's timeout job is not needed; a run that ends before it fires drops it (the job would change nothing anyway). */
  async disarmTimeout(run: ChainRun): Promise<void> {
    if (run.deadline_at !== null) await this.scheduler.cancel(CHAIN_TIMEOUT_KIND, run.id);
  }
}
