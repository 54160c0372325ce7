import type { ChainDefinition } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { applyStepResult, childRunId, endRun, newRun, stepPayload } from './chain-run-record.js';

const T0 = Date.UTC(2026, 0, 1);
const def = (over: Partial<ChainDefinition> = {}): ChainDefinition => ({
  name: 'c',
  on_failure: 'abort',
  steps: [
    { name: 'one', provider: 'p', action_type: 'a' },
    { name: 'two', provider: 'p', action_type: 'a', delay_seconds: 5 },
    { name: 'three', provider: 'p', action_type: 'a' },
  ],
  ...over,
});
const run = (d = def(), parent: { chainId: string; step: number; deadlineAt: string | null } | null = null) =>
  newRun({
    id: 'r',
    namespace: 'n',
    tenant: 't',
    definition: d,
    subChains: undefined,
    trigger: { action_id: 'x', rule: 'r', payload: { k: 1 }, metadata: {} },
    seed: null,
    parent,
    nowMs: T0,
  });
const failure = { ok: false as const, error: { code: 'EXECUTION_FAILED', message: 'boom' } };

describe('chain run records', () => {
  it('a success moves to the next step, passing its body on; the last one completes the run', () => {
    const first = applyStepResult(run(), 0, { ok: true, body: { n: 1 } }, T0 + 10);
    expect(first).toMatchObject({ current_step: 1, execution_path: ['one'], status: 'running' });
    expect(stepPayload(first, 1)).toEqual({
      k: 1,
      chain: { chain_id: 'r', chain_name: 'c', step: 'two', step_index: 1, previous: { n: 1 }, outputs: { one: { n: 1 } } },
    });
    const second = applyStepResult(first, 1, { ok: true, body: 2 }, T0 + 20);
    const last = applyStepResult(second, 2, { ok: true, body: 3 }, T0 + 30);
    expect(last).toMatchObject({ status: 'completed', current_step: 3, finished_at: new Date(T0 + 30).toISOString() });
  });

  it('passes on the output of a step named __proto__ like any other', () => {
    const steps = def().steps.map((s, i) => (i === 0 ? { ...s, name: '__proto__' } : s));
    const first = applyStepResult(run(def({ steps })), 0, { ok: true, body: { n: 1 } }, T0 + 10);
    const outputs = (stepPayload(first, 1).chain as { outputs: object }).outputs;
    expect(Object.getOwnPropertyDescriptor(outputs, '__proto__')?.value).toEqual({ n: 1 });
    expect(JSON.stringify(outputs)).toBe('{"__proto__":{"n":1}}');
  });

  it('a failure aborts (the rest skipped) unless the step or the chain says skip', () => {
    const aborted = applyStepResult(run(), 0, failure, T0);
    expect(aborted.status).toBe('failed');
    expect(aborted.steps.map((s) => s.status)).toEqual(['failed', 'skipped', 'skipped']);
    expect(applyStepResult(run(def({ on_failure: 'skip' })), 0, failure, T0)).toMatchObject({ status: 'running', current_step: 1 });
    const stepSkip = def();
    stepSkip.steps[0] = { ...stepSkip.steps[0]!, on_failure: 'skip' };
    expect(applyStepResult(run(stepSkip), 0, failure, T0).status).toBe('running');
    expect(applyStepResult(run(def({ on_failure: 'dlq' })), 0, failure, T0).status).toBe('failed');
  });

  it('a child run keeps the tighter of its own timeout and its parent’s deadline', () => {
    const parentDeadline = new Date(T0 + 60_000).toISOString();
    expect(run(def({ timeout_seconds: 600 }), { chainId: 'p', step: 1, deadlineAt: parentDeadline }).deadline_at).toBe(parentDeadline);
    expect(run(def({ timeout_seconds: 10 }), { chainId: 'p', step: 1, deadlineAt: parentDeadline }).deadline_at).toBe(new Date(T0 + 10_000).toISOString());
    expect(run(def(), null).deadline_at).toBeNull();
  });

  it('cancelling marks every unfinished step cancelled; child ids are stable per (run, step, attempt)', () => {
    const cancelled = endRun(applyStepResult(run(), 0, { ok: true, body: 1 }, T0), 'cancelled', T0, { cancel_reason: 'x' });
    expect(cancelled.steps.map((s) => s.status)).toEqual(['completed', 'cancelled', 'cancelled']);
    expect(childRunId('r', 1, 1)).toBe(childRunId('r', 1, 1));
    expect(childRunId('r', 1, 1)).not.toBe(childRunId('r', 1, 2));
    expect(childRunId('r', 1, 1)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('a run failing while a step runs (its timeout) fails that step with the reason; the steps never reached are skipped', () => {
    const going = applyStepResult(run(), 0, { ok: true, body: 1 }, T0);
    const calling = { ...going, steps: going.steps.map((s, i) => (i === 1 ? { ...s, status: 'running' as const } : s)) };
    const failed = endRun(calling, 'failed', T0 + 5, { failure_reason: 'timed out after timeout_seconds (2)' });
    expect(failed.steps.map((s) => s.status)).toEqual(['completed', 'failed', 'skipped']);
    expect(failed.steps[1]).toMatchObject({
      error: { code: 'TIMEOUT', message: 'timed out after timeout_seconds (2)' },
      completed_at: new Date(T0 + 5).toISOString(),
    });
  });
});
