import { createHash } from 'node:crypto';
import { isoString, type ChainDefinition, type ChainRun, type ChainRunDetail, type ChainRunStep, type ChainRunSummary } from '@sluice/core';

/**
 * The pure half of chain runs: a new run, the payload each step gets, and how a step's result
 * moves the run on. The service reads, applies one of these and writes back by compare-and-swap.
 */

/** What started a run: the dispatched action (root), or the parent step that runs it (child). */
export interface RunStart {
  id: string;
  namespace: string;
  tenant: string;
  definition: ChainDefinition;
  /** The sub-chains it can reach, kept with the run (a child gets its root's). */
  subChains: Record<string, ChainDefinition> | undefined;
  trigger: ChainRun['trigger'];
  seed: unknown;
  parent: { chainId: string; step: number; deadlineAt: string | null } | null;
  nowMs: number;
}

export function newRun(start: RunStart): ChainRun {
  const now = isoString(start.nowMs);
  const own = start.definition.timeout_seconds === undefined ? null : start.nowMs + start.definition.timeout_seconds * 1000;
  const inherited = start.parent?.deadlineAt ? Date.parse(start.parent.deadlineAt) : null;
  const deadline = own === null ? inherited : inherited === null ? own : Math.min(own, inherited);
  return {
    id: start.id,
    namespace: start.namespace,
    tenant: start.tenant,
    chain_name: start.definition.name,
    status: 'running',
    definition: start.definition,
    ...(start.subChains === undefined ? {} : { sub_chains: start.subChains }),
    trigger: start.trigger,
    seed: start.seed ?? null,
    current_step: 0,
    steps: start.definition.steps.map((s) => ({
      name: s.name,
      status: 'pending',
      provider: s.provider ?? null,
      action_type: s.action_type ?? null,
      sub_chain: s.sub_chain ?? null,
      child_chain_id: null,
      action_id: null,
      attempt: 1,
      response_body: null,
      error: null,
      started_at: null,
      completed_at: null,
    })),
    execution_path: [],
    parent_chain_id: start.parent?.chainId ?? null,
    parent_step: start.parent?.step ?? null,
    child_chain_ids: [],
    started_at: now,
    updated_at: now,
    finished_at: null,
    deadline_at: deadline === null ? null : isoString(deadline),
    failure_reason: null,
    cancel_reason: null,
    cancelled_by: null,
  };
}

/** The id of a step's child run: derived, so a step job that runs twice finds the child it made. */
export function childRunId(parentId: string, step: number, attempt: number): string {
  const hex = createHash('sha256').update(`${parentId}/${step}/${attempt}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** A provider step's action id: the same on every try, so a receiver can drop a repeat delivery. */
export function stepActionId(run: ChainRun, step: number): string {
  return `${run.id}:${step}:${(run.steps[step] as ChainRunStep).attempt}`;
}

/** What the step before `step` gave: the previous step's body, or the run's seed before the first one. */
export function previousBody(run: ChainRun, step: number): unknown {
  for (let i = step - 1; i >= 0; i--) {
    const s = run.steps[i] as ChainRunStep;
    if (s.status === 'completed') return s.response_body;
  }
  return run.seed;
}

/**
 * A step's payload: the triggering action's payload with `chain` set to where the run stands,
 * `chain.previous` the last completed step's response body, `chain.outputs` every completed
 * step's body by step name. (docs/chains.md, "Passing output on")
 */
export function stepPayload(run: ChainRun, step: number): Record<string, unknown> {
  // Built with fromEntries (own properties): a step named `__proto__` is an output like any other.
  const outputs = Object.fromEntries(run.steps.slice(0, step).flatMap((s) => (s.status === 'completed' ? [[s.name, s.response_body]] : [])));
  return {
    ...run.trigger.payload,
    chain: {
      chain_id: run.id,
      chain_name: run.chain_name,
      step: (run.steps[step] as ChainRunStep).name,
      step_index: step,
      previous: previousBody(run, step),
      outputs,
    },
  };
}

export type StepResult = { ok: true; body: unknown } | { ok: false; error: { code: string; message: string } };

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value ?? null));
}

/**
 * A step's result as the run can keep it: a body that would take the response bodies the run keeps
 * past `maxBytes` fails the step instead (`OUTPUT_TOO_LARGE`). Every later step's payload carries
 * all of them, and its audit record with it, so without a bound a run of steps answering near
 * `max_response_bytes` grows its payloads, records and writes with the square of its length.
 */
export function boundedStepResult(run: ChainRun, step: number, result: StepResult, maxBytes: number): StepResult {
  if (!result.ok) return result;
  const body = jsonBytes(result.body);
  let kept = 0;
  run.steps.forEach((s, i) => {
    if (i !== step && s.status === 'completed') kept += jsonBytes(s.response_body);
  });
  if (kept + body <= maxBytes) return result;
  const message = `its response body (${body} bytes) would take the outputs this run keeps to ${kept + body} bytes, past chains.max_output_bytes (${maxBytes})`;
  return { ok: false, error: { code: 'OUTPUT_TOO_LARGE', message } };
}

/**
 * Records a step's result and moves the run on: to the next step (its job enqueued by the caller), or to the end (completed; failed when
 * the step's `on_failure` is abort or dlq, with the steps never reached `skipped`).
 */
export function applyStepResult(run: ChainRun, step: number, result: StepResult, nowMs: number): ChainRun {
  const now = isoString(nowMs);
  const def = run.definition.steps[step] as ChainDefinition['steps'][number];
  const steps = run.steps.slice();
  const current = steps[step] as ChainRunStep;
  steps[step] = result.ok
    ? { ...current, status: 'completed', response_body: result.body ?? null, error: null, completed_at: now }
    : { ...current, status: 'failed', error: result.error, completed_at: now };
  const moved: ChainRun = { ...run, steps, execution_path: [...run.execution_path, current.name], updated_at: now };
  const policy = def.on_failure ?? run.definition.on_failure;
  if (!result.ok && policy !== 'skip') {
    return endRun(moved, 'failed', nowMs, { failure_reason: `step ${current.name} failed: ${result.error.message}` });
  }
  const next = step + 1;
  return next >= run.steps.length ? endRun({ ...moved, current_step: next }, 'completed', nowMs) : { ...moved, current_step: next };
}

/** Ends a run: steps not finished become `skipped` (failed) or `cancelled`; a completed run points past its last step. */
export function endRun(
  run: ChainRun,
  status: 'completed' | 'failed' | 'cancelled',
  nowMs: number,
  reasons: Partial<Pick<ChainRun, 'failure_reason' | 'cancel_reason' | 'cancelled_by'>> = {},
): ChainRun {
  const now = isoString(nowMs);
  const steps = run.steps.map((s): ChainRunStep => {
    if (status === 'cancelled' && (s.status === 'pending' || s.status === 'running' || s.status === 'waiting_sub_chain')) return { ...s, status: 'cancelled' };
    if (s.status === 'pending') return { ...s, status: 'skipped' };
    // Reached, and still going when the run failed (its timeout): failed with the run's reason, not "never reached".
    if (s.status === 'running' || s.status === 'waiting_sub_chain') {
      return { ...s, status: 'failed', error: { code: 'TIMEOUT', message: reasons.failure_reason ?? 'the run failed' }, completed_at: now };
    }
    return s;
  });
  return { ...run, ...reasons, status, steps, current_step: run.steps.length, updated_at: now, finished_at: now };
}

export function runSummary(run: ChainRun): ChainRunSummary {
  return {
    chain_id: run.id,
    chain_name: run.chain_name,
    namespace: run.namespace,
    tenant: run.tenant,
    status: run.status,
    current_step: run.current_step,
    total_steps: run.steps.length,
    started_at: run.started_at,
    updated_at: run.updated_at,
    parent_chain_id: run.parent_chain_id,
  };
}

/** The API's view: everything but the stored definition, the trigger's payload and the seed. */
export function runDetail(run: ChainRun): ChainRunDetail {
  return {
    ...runSummary(run),
    trigger_action_id: run.trigger.action_id,
    rule: run.trigger.rule,
    steps: run.steps,
    execution_path: run.execution_path,
    child_chain_ids: run.child_chain_ids,
    finished_at: run.finished_at,
    deadline_at: run.deadline_at,
    duration_ms: run.finished_at === null ? null : Date.parse(run.finished_at) - Date.parse(run.started_at),
    failure_reason: run.failure_reason,
    cancel_reason: run.cancel_reason,
    cancelled_by: run.cancelled_by,
  };
}
