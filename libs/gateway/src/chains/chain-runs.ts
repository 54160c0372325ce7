import { setTimeout as sleep } from 'node:timers/promises';
import {
  ChainRun,
  errors,
  isoString,
  newId,
  type Action,
  type ChainDag,
  type ChainDefinition,
  type ChainRunListQuery,
  type ChainRunStep,
  type ChainRunSummary,
  type Clock,
  type DispatchOutcome,
  type FailureInfo,
} from '@sluice/core';
import { RecordRepository, WORKER_DEATHS_TOLERATED, type Job, type Scheduler, type StateStore, type StoredRecord } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import type { InternalEventBus } from '../events/internal-events.js';
import { decodeWith } from '../policies/schema-decoder.js';
import { runDag } from './chain-run-dag.js';
import {
  applyStepResult,
  boundedStepResult,
  childRunId,
  endRun,
  newRun,
  previousBody,
  runSummary,
  stepActionId,
  stepPayload,
  type StepResult,
} from './chain-run-record.js';
import { ChainJobs, isChainJobData, type ChainJobData } from './chain-jobs.js';

/** The key kind of chain runs: never rename without a migration. */
const CHAIN_RUN_KIND = 'chain-run';
/** Compare-and-swap rounds on one run before a job gives up (and is retried by the scheduler). */
const CAS_ROUNDS = 8;
/**
 * Tries at recording the result of a step whose provider was called, before the job fails: a
 * retried job would call the provider again, so a short blip of the state backend is waited out
 * here (waits of 0.25, 0.5, 1 and 2 s; real time, as a backend comes back in real time).
 */
const RECORD_TRIES = 5;
const RECORD_FIRST_WAIT_MS = 250;

/** Runs a step's action through the execute stage, its audit record carrying the chain id. */
export type StepExecutor = (action: Action, chainId: string) => Promise<DispatchOutcome>;
/** Puts a failed step's action in the dead-letter queue (absent while the queue is off). */
type StepDeadLetter = (action: Action, provider: string, error: FailureInfo) => Promise<void>;

export interface ChainRunsDeps {
  state: StateStore;
  clock: Clock;
  logger: Logger;
  scheduler: Scheduler;
  events: InternalEventBus;
  /** Definitions as they are now: what a sub_chain step starts, and the graph of one not started yet. */
  definitions: { find(name: string): ChainDefinition | undefined; dag(name: string): ChainDag };
  deadLetter?: StepDeadLetter;
  /** Runs read at a time by the retention reaper (default 500). */
  reapPage?: number;
  /** `chains.max_output_bytes`: the response bodies one run keeps, in JSON bytes (default 1 MiB). */
  maxOutputBytes?: number;
}

export interface ChainTrigger {
  action: Action;
  rule: string | null;
}

/**
 * Chain runs. A `chain` rule stores a run and enqueues its first step; each step is a job (any
 * worker) that claims the step by compare-and-swap on the run, calls the provider (or starts a
 * child run and waits for it), records the result by compare-and-swap and enqueues what is due
 * next under a deterministic id. A job that runs twice finds the step done and only re-enqueues
 * (a no-op); a worker dying mid-call leaves the step `running`, and the job's retry calls the
 * provider again with the same action id (at least once; see docs/chains.md).
 */
export class ChainRuns {
  private readonly records: RecordRepository<ChainRun>;
  private readonly jobs: ChainJobs;
  private readonly log: Logger;
  private readonly reapPage: number;
  private readonly maxOutputBytes: number;

  constructor(private readonly deps: ChainRunsDeps) {
    this.log = deps.logger.child({ component: 'chains' });
    this.reapPage = deps.reapPage ?? 500;
    this.maxOutputBytes = deps.maxOutputBytes ?? 1_048_576;
    this.jobs = new ChainJobs(deps.scheduler, deps.clock);
    this.records = new RecordRepository<ChainRun>({
      state: deps.state,
      clock: deps.clock,
      kind: CHAIN_RUN_KIND,
      label: 'chain run',
      decode: decodeWith(ChainRun),
      globalIds: true,
    });
  }

  /** Stores a run of `def` (with the sub-chains it can reach) for the action and enqueues its first step; answers `chain_started`. */
  async start(def: ChainDefinition, subChains: Record<string, ChainDefinition>, trigger: ChainTrigger): Promise<{ outcome: DispatchOutcome; chainId: string }> {
    const { action } = trigger;
    const run = newRun({
      id: newId(),
      namespace: action.namespace,
      tenant: action.tenant,
      definition: def,
      subChains,
      trigger: {
        action_id: action.id,
        provider: action.provider,
        action_type: action.action_type,
        rule: trigger.rule,
        payload: action.payload,
        metadata: action.metadata ?? {},
      },
      seed: null,
      parent: null,
      nowMs: this.deps.clock.now(),
    });
    // The record first: a step job finding no run has nothing to do. A process dying before the
    // jobs are enqueued never answered, so the run it leaves is one nobody was promised.
    const created = await this.records.create(run);
    if (created !== 'created') throw new Error(`chain run id ${run.id} could not be claimed (${created})`);
    // The timeout first: should the step's enqueue fail, the run still ends (failed) at its deadline.
    await this.jobs.armTimeout(run);
    try {
      await this.jobs.due(run);
    } catch (err) {
      // Nothing would ever advance it: end it now rather than leave it running for good.
      await this.records.update(run, (r) =>
        r.status === 'running' ? endRun(r, 'failed', this.deps.clock.now(), { failure_reason: 'its first step could not be scheduled' }) : r,
      );
      throw err;
    }
    const first = run.steps[0] as ChainRunStep;
    return {
      chainId: run.id,
      outcome: {
        outcome: 'chain_started',
        action_id: action.id,
        chain_id: run.id,
        chain_name: run.chain_name,
        total_steps: run.steps.length,
        first_step: first.name,
      },
    };
  }

  /**
   * A step job: runs, resumes or re-checks the step its data names; anything stale changes nothing.
   * A job out of tries fails its step instead of leaving the run `running` with nothing to move
   * it: on its last attempt when it throws, and without running the step when its workers died
   * so often that one more death would fail the job (a step that crashes every worker).
   */
  async onStepJob(job: Job, execute: StepExecutor): Promise<void> {
    const { data } = job;
    if (!isChainJobData(data) || data.step === undefined) throw new Error('chain step job has malformed data');
    const step = { ...data, step: data.step };
    if (job.workerDeaths >= WORKER_DEATHS_TOLERATED) {
      await this.giveUp(step, { code: 'WORKER_DIED', message: `the worker running this step died ${job.workerDeaths} times; not run again` });
      return;
    }
    try {
      await this.runStep(step, execute);
    } catch (err) {
      if (!job.lastTry) throw err;
      this.log.warn({ chain: data.chain_id, step: data.step, err }, 'chain step job failed on its last attempt; the step fails');
      await this.giveUp(step, { code: 'STEP_JOB_FAILED', message: `this step's job failed on its last attempt (${job.attempt}); the worker logs say why` });
    }
  }

  private async runStep(data: ChainJobData & { step: number }, execute: StepExecutor): Promise<void> {
    const ref = { namespace: data.namespace, tenant: data.tenant, id: data.chain_id };
    for (let round = 0; round < CAS_ROUNDS; round++) {
      const stored = await this.records.get(ref);
      if (!stored) return; // deleted by retention: nothing is due
      const outcome = await this.stepOnce(stored, data.step, execute);
      if (outcome !== 'retry') return;
    }
    throw new Error(`chain run ${data.chain_id} kept changing under step ${data.step}; retrying the job`);
  }

  /**
   * Fails the step a job could not carry out, if the run still waits for it; its `on_failure`
   * applies as to a failed dispatch (dlq queues the step's action, which may never have run).
   */
  private async giveUp(data: ChainJobData & { step: number }, error: { code: string; message: string }): Promise<void> {
    const stored = await this.records.get({ namespace: data.namespace, tenant: data.tenant, id: data.chain_id });
    if (!stored) return;
    const run = stored.record;
    const step = run.steps[data.step];
    const waiting = run.status === 'running' && run.current_step === data.step && (step?.status === 'pending' || step?.status === 'running');
    if (waiting && step.sub_chain === null && this.policyOf(run, data.step) === 'dlq') {
      await this.deadLetter(this.stepAction(run, data.step), { code: 'EXECUTION_FAILED', message: error.message, retryable: true, attempts: 0 });
    }
    await this.finishStep(stored, data.step, { ok: false, error });
  }

  /** The timeout job: an overdue running run fails, its children are cancelled and its parent told. */
  async onTimeoutJob(data: unknown): Promise<void> {
    if (!isChainJobData(data)) throw new Error('chain timeout job has malformed data');
    const stored = await this.records.get({ namespace: data.namespace, tenant: data.tenant, id: data.chain_id });
    if (stored?.record.status === 'running') await this.timeOut(stored);
    // A retried job whose first try ended the run but died before telling its parent.
    else if (stored) await this.jobs.due(stored.record);
  }

  async get(id: string): Promise<ChainRun> {
    const found = await this.records.find(id);
    if (!found) throw errors.notFound('chain run', id);
    return found.record;
  }

  /**
   * Newest first. Without a status or chain_name filter, for a caller who sees every run, a page
   * of one scope (or of every scope) reads only its own runs from the listing index; otherwise
   * every run of the scope is read and filtered, and the cost grows with the runs kept.
   */
  async list(query: ChainRunListQuery, visible?: (run: ChainRun) => boolean): Promise<{ chains: ChainRunSummary[]; count: number }> {
    if (visible === undefined && query.status === undefined && query.chain_name === undefined) {
      const page = await this.records.newestPage(query, { offset: query.offset, limit: query.limit });
      if (page) return { chains: page.records.map(runSummary), count: page.total };
    }
    const matching = (await this.records.listIn(query))
      .filter(
        (r) =>
          (query.status === undefined || r.status === query.status) &&
          (query.chain_name === undefined || r.chain_name === query.chain_name) &&
          (visible === undefined || visible(r)),
      )
      .reverse();
    return { chains: matching.slice(query.offset, query.offset + query.limit).map(runSummary), count: matching.length };
  }

  async dag(id: string): Promise<ChainDag> {
    const run = await this.get(id);
    const loadChild = async (childId: string) => (await this.records.get({ namespace: run.namespace, tenant: run.tenant, id: childId }))?.record ?? null;
    const plannedDag = (name: string) => (this.deps.definitions.find(name) ? this.deps.definitions.dag(name) : undefined);
    return runDag(run, loadChild, plannedDag);
  }

  /** Cancels a running run and, first, every running run below it; 409 when it is not running. A child's parent is told. */
  async cancel(id: string, reason: string | null, by: string): Promise<ChainRun> {
    const found = await this.records.find(id);
    if (!found) throw errors.notFound('chain run', id);
    const cancelled = await this.end(found, (run) => endRun(run, 'cancelled', this.deps.clock.now(), { cancel_reason: reason, cancelled_by: by }));
    if (!cancelled) {
      const now = await this.records.find(id);
      throw errors.conflict(`chain run ${id} is ${now?.record.status ?? 'gone'}, not running`);
    }
    return cancelled;
  }

  /**
   * Finished runs (completed, failed, cancelled) of a tenant that ended before `cutoffMs`: deleted;
   * returns how many. Read a page at a time, oldest first, up to the first run started after the
   * cutoff (it and every later one ended after it): a tenant's millions of runs were all loaded
   * at once, every cycle.
   */
  async reapFinished(namespace: string, tenant: string, cutoffMs: number): Promise<number> {
    let deleted = 0;
    // Deleted runs leave the listing, so the offset moves past what stays: kept runs, and entries of runs gone.
    let offset = 0;
    for (;;) {
      const { records, entries } = await this.records.list({ namespace, tenant }, { offset, limit: this.reapPage });
      offset += entries;
      for (const { record } of records) {
        if (Date.parse(record.started_at) > cutoffMs) return deleted;
        const ended = record.status !== 'running' && record.finished_at !== null && Date.parse(record.finished_at) <= cutoffMs;
        if (ended && (await this.records.remove(record))) {
          deleted += 1;
          offset -= 1;
        }
      }
      if (entries < this.reapPage) return deleted;
    }
  }

  /** One look at the run for step `index`; 'retry' when a compare-and-swap lost (read again). */
  private async stepOnce(stored: StoredRecord<ChainRun>, index: number, execute: StepExecutor): Promise<'done' | 'retry'> {
    const run = stored.record;
    if (run.status !== 'running' || run.current_step !== index) {
      await this.jobs.due(run); // a retried job whose follow-up may not have been enqueued
      return 'done';
    }
    if (run.deadline_at !== null && this.deps.clock.now() >= Date.parse(run.deadline_at)) {
      await this.timeOut(stored);
      return 'done';
    }
    if (!(await this.parentRunning(run))) {
      await this.cancelChild(stored, 'parent run ended');
      return 'done';
    }
    const step = run.steps[index] as ChainRunStep;
    if (step.status === 'waiting_sub_chain') return this.resumeFromChild(stored, index);
    if (step.status !== 'pending' && step.status !== 'running') {
      await this.jobs.due(run);
      return 'done';
    }
    return step.sub_chain === null ? this.runProviderStep(stored, index, execute) : this.startChild(stored, index);
  }

  /** The action a provider step dispatches: same id for every run of the step's attempt. */
  private stepAction(run: ChainRun, index: number): Action {
    const step = run.steps[index] as ChainRunStep;
    return {
      id: stepActionId(run, index),
      namespace: run.namespace,
      tenant: run.tenant,
      provider: step.provider as string,
      action_type: step.action_type as string,
      payload: stepPayload(run, index),
      metadata: { ...run.trigger.metadata, chain_id: run.id, chain_name: run.chain_name, chain_step: step.name },
      created_at: isoString(this.deps.clock.now()),
    };
  }

  private async runProviderStep(stored: StoredRecord<ChainRun>, index: number, execute: StepExecutor): Promise<'done' | 'retry'> {
    const run = stored.record;
    const step = run.steps[index] as ChainRunStep;
    const now = this.deps.clock.now();
    const action = this.stepAction(run, index);
    // A step found `running` was claimed by a worker that died mid-call: it runs again, same action id.
    const claimed = await this.records.swap(
      stored,
      this.withStep(run, index, { status: 'running', action_id: action.id, started_at: step.started_at ?? isoString(now) }),
    );
    if (!claimed) return 'retry';
    const outcome = await execute(action, run.id);
    const result = stepResult(outcome);
    const deadLetter = outcome.outcome === 'failed' && this.policyOf(run, index) === 'dlq' ? outcome.error : null;
    await this.recordCalledStep(claimed, index, result, deadLetter === null ? undefined : () => this.deadLetter(action, deadLetter));
    return 'done';
  }

  /**
   * Queues the step's dead letter (if it has one; its id is the action's, so queuing it again adds
   * nothing) and finishStep, for a step whose provider was called: tried again here on an error
   * rather than by a job retry, which would call the provider again.
   */
  private async recordCalledStep(from: StoredRecord<ChainRun>, index: number, result: StepResult, deadLetter?: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await deadLetter?.();
        await this.finishStep(from, index, result);
        return;
      } catch (err) {
        if (attempt >= RECORD_TRIES) throw err;
        this.log.warn({ chain: from.record.id, step: index, attempt, err }, 'recording a called step failed; trying again');
        await sleep(RECORD_FIRST_WAIT_MS * 2 ** (attempt - 1));
      }
    }
  }

  /** Creates the child run (id derived from the step, so a retried job finds it), then points the step at it. */
  private async startChild(stored: StoredRecord<ChainRun>, index: number): Promise<'done' | 'retry'> {
    const run = stored.record;
    const step = run.steps[index] as ChainRunStep;
    // The definition kept with the run when its root started (runs stored before that: today's).
    const name = step.sub_chain as string;
    const def = run.sub_chains ? run.sub_chains[name] : this.deps.definitions.find(name);
    if (!def) {
      await this.finishStep(stored, index, { ok: false, error: { code: 'CHAIN_NOT_FOUND', message: `sub_chain ${step.sub_chain} is not defined` } });
      return 'done';
    }
    const now = this.deps.clock.now();
    const child = newRun({
      id: childRunId(run.id, index, step.attempt),
      namespace: run.namespace,
      tenant: run.tenant,
      definition: def,
      subChains: run.sub_chains,
      trigger: run.trigger,
      seed: previousBody(run, index),
      parent: { chainId: run.id, step: index, deadlineAt: run.deadline_at },
      nowMs: now,
    });
    const created = await this.records.create(child);
    if (created !== 'created' && created !== 'id-taken') throw new Error(`child chain run ${child.id} could not be created (${created})`);
    const waiting: ChainRun = {
      ...this.withStep(run, index, { status: 'waiting_sub_chain', child_chain_id: child.id, started_at: step.started_at ?? isoString(now) }),
      child_chain_ids: run.child_chain_ids.includes(child.id) ? run.child_chain_ids : [...run.child_chain_ids, child.id],
    };
    if (!(await this.records.swap(stored, waiting))) {
      // The parent changed first. Still running: read it again. Ended (a cancel won): the child it never listed ends too.
      const parent = await this.records.get(run);
      if (parent?.record.status === 'running') return 'retry';
      const orphan = await this.records.get(child);
      if (orphan) await this.cancelChild(orphan, 'parent run ended');
      return 'done';
    }
    const current = (await this.records.get(child))?.record ?? child;
    await this.jobs.armTimeout(current);
    await this.jobs.due(current);
    this.advanced(waiting, index);
    return 'done';
  }

  /** The step's child run ended: its result is the step's. One still running needs nothing (its own jobs run it). */
  private async resumeFromChild(stored: StoredRecord<ChainRun>, index: number): Promise<'done' | 'retry'> {
    const step = stored.record.steps[index] as ChainRunStep;
    const child =
      step.child_chain_id === null
        ? null
        : (await this.records.get({ namespace: stored.record.namespace, tenant: stored.record.tenant, id: step.child_chain_id }))?.record;
    if (child?.status === 'running') {
      // A retried start job: what its first try may not have enqueued before dying.
      await this.jobs.armTimeout(child);
      await this.jobs.due(child);
      return 'done';
    }
    const result: StepResult = !child
      ? { ok: false, error: { code: 'SUB_CHAIN_LOST', message: `child run ${step.child_chain_id} no longer exists` } }
      : child.status === 'completed'
        ? { ok: true, body: previousBody(child, child.steps.length) }
        : {
            ok: false,
            error: {
              code: child.status === 'cancelled' ? 'SUB_CHAIN_CANCELLED' : 'SUB_CHAIN_FAILED',
              message: `sub-chain ${child.chain_name} ${child.status}: ${child.failure_reason ?? child.cancel_reason ?? ''}`.trim(),
            },
          };
    await this.finishStep(stored, index, result);
    return 'done';
  }

  /** Records a step's result if the run still waits for it, then enqueues what is due (next step, or the parent's resume). */
  private async finishStep(from: StoredRecord<ChainRun>, index: number, outcome: StepResult): Promise<void> {
    const result = boundedStepResult(from.record, index, outcome, this.maxOutputBytes);
    let stored: StoredRecord<ChainRun> | null = from;
    for (let round = 0; stored && round < CAS_ROUNDS; round++) {
      const run: ChainRun = stored.record;
      const step = run.steps[index] as ChainRunStep;
      if (
        run.status !== 'running' ||
        run.current_step !== index ||
        (step.status !== 'running' && step.status !== 'waiting_sub_chain' && step.status !== 'pending')
      ) {
        await this.jobs.due(run);
        return;
      }
      const next = applyStepResult(run, index, result, this.deps.clock.now());
      const written = await this.records.swap(stored, next);
      if (written) {
        this.advanced(next, index);
        if (next.status !== 'running') await this.afterEnd(next);
        await this.jobs.due(next);
        return;
      }
      stored = await this.records.get(run);
    }
    if (stored) throw new Error(`chain run ${from.record.id} kept changing while step ${index} finished`);
  }

  /** Moves a running run to its end by compare-and-swap; null when it was not running. Cascades to its children and tells its parent. */
  private async end(from: StoredRecord<ChainRun>, change: (run: ChainRun) => ChainRun): Promise<ChainRun | null> {
    let stored: StoredRecord<ChainRun> | null = from;
    for (let round = 0; stored && round < CAS_ROUNDS; round++) {
      if (stored.record.status !== 'running') return null;
      const next = change(stored.record);
      if (await this.records.swap(stored, next)) {
        this.advanced(next, Math.min(stored.record.current_step, next.steps.length - 1));
        await this.afterEnd(next);
        await this.jobs.due(next);
        return next;
      }
      stored = await this.records.get(stored.record);
    }
    if (stored) throw errors.conflict(`chain run ${from.record.id} kept changing; try again`);
    return null;
  }

  private async timeOut(stored: StoredRecord<ChainRun>): Promise<void> {
    const seconds = stored.record.definition.timeout_seconds;
    const reason = seconds === undefined ? 'timed out (a parent run’s timeout_seconds)' : `timed out after timeout_seconds (${seconds})`;
    await this.end(stored, (run) => endRun(run, 'failed', this.deps.clock.now(), { failure_reason: reason }));
  }

  /** A run that ended cancels the children still running (which tell it nothing back: it is no longer running). */
  private async afterEnd(run: ChainRun): Promise<void> {
    await this.jobs.disarmTimeout(run);
    for (const childId of run.child_chain_ids) {
      const child = await this.records.get({ namespace: run.namespace, tenant: run.tenant, id: childId });
      if (child?.record.status !== 'running') continue;
      await this.cancelChild(child, `parent run ${run.status}`);
    }
  }

  /** A child run ended because its parent did (cancelled by the chain itself, not a caller). */
  private cancelChild(stored: StoredRecord<ChainRun>, reason: string): Promise<ChainRun | null> {
    return this.end(stored, (c) => endRun(c, 'cancelled', this.deps.clock.now(), { cancel_reason: reason, cancelled_by: 'chain' }));
  }

  /** A child run goes on only while its parent runs (a cancel racing the child's creation is caught here). */
  private async parentRunning(run: ChainRun): Promise<boolean> {
    if (run.parent_chain_id === null) return true;
    const parent = await this.records.get({ namespace: run.namespace, tenant: run.tenant, id: run.parent_chain_id });
    return parent?.record.status === 'running';
  }

  private policyOf(run: ChainRun, index: number): 'abort' | 'skip' | 'dlq' {
    return run.definition.steps[index]?.on_failure ?? run.definition.on_failure;
  }

  private async deadLetter(action: Action, error: FailureInfo): Promise<void> {
    if (!this.deps.deadLetter) {
      this.log.warn(
        { chain: action.metadata['chain_id'], action: action.id },
        'chain step on_failure is dlq but the dead-letter queue is off; step failed without an entry',
      );
      return;
    }
    await this.deps.deadLetter(action, action.provider, error);
  }

  private withStep(run: ChainRun, index: number, change: Partial<ChainRunStep>): ChainRun {
    const steps = run.steps.slice();
    steps[index] = { ...(steps[index] as ChainRunStep), ...change };
    return { ...run, steps, updated_at: isoString(this.deps.clock.now()) };
  }

  private advanced(run: ChainRun, index: number): void {
    const step = run.steps[index] as ChainRunStep;
    this.deps.events.emit({
      type: 'chain_advanced',
      namespace: run.namespace,
      tenant: run.tenant,
      at: run.updated_at,
      data: {
        chain_id: run.id,
        chain_name: run.chain_name,
        step: step.name,
        step_index: index,
        step_status: step.status,
        chain_status: run.status,
        next_step: run.status === 'running' ? (run.steps[run.current_step]?.name ?? null) : null,
        parent_chain_id: run.parent_chain_id,
      },
    });
  }
}

/** A provider step's outcome as a step result: executed (or rerouted) is its response body; anything else failed it. */
function stepResult(outcome: DispatchOutcome): StepResult {
  if (outcome.outcome === 'executed' || outcome.outcome === 'rerouted') return { ok: true, body: outcome.response.body };
  if (outcome.outcome === 'failed') return { ok: false, error: { code: outcome.error.code, message: outcome.error.message } };
  return { ok: false, error: { code: 'UNEXPECTED_OUTCOME', message: `the step's dispatch answered ${outcome.outcome}` } };
}
