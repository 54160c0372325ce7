import { ManualClock, type ChainDefinition, type DispatchOutcome } from '@sluice/core';
import { InProcessScheduler, MemoryStateStore, type Job, type StateStore } from '@sluice/state';
import { createLogger } from '@sluice/telemetry';
import { describe, expect, it } from 'vitest';
import { InternalEventBus } from '../events/internal-events.js';
import { ChainRuns } from './chain-runs.js';

const DEF = { name: 'one', on_failure: 'abort', steps: [{ name: 's', provider: 'p', action_type: 'a' }] } as ChainDefinition;

/** A view of `state` whose next compare-and-swap of a chain run throws once `armed()` says so. */
function failingOnce(state: StateStore, armed: () => boolean): StateStore {
  let failed = false;
  return new Proxy(state, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      if (prop !== 'compareAndSwap') return value.bind(target);
      return (...args: Parameters<StateStore['compareAndSwap']>) => {
        if (!failed && armed() && args[0].kind === 'chain-run') {
          failed = true;
          return Promise.reject(new Error('state backend unreachable'));
        }
        return target.compareAndSwap(...args);
      };
    },
  });
}

describe('a step whose provider was called', () => {
  it('waits out a failure to record its result instead of failing the job (whose retry would call the provider again)', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 29));
    let calls = 0;
    const state = failingOnce(new MemoryStateStore({ clock }), () => calls > 0);
    const runs = new ChainRuns({
      state,
      clock,
      logger: createLogger({ level: 'silent', role: 'test' }),
      scheduler: new InProcessScheduler({ clock }), // not started: the test runs the step job itself
      events: new InternalEventBus(),
      definitions: { find: () => DEF, dag: () => ({ nodes: [], edges: [] }) as never },
    });
    const action = {
      id: 'a1',
      namespace: 'ns',
      tenant: 't',
      provider: 'p',
      action_type: 'a',
      payload: {},
      metadata: {},
      created_at: new Date(clock.now()).toISOString(),
    };
    const { chainId } = await runs.start(DEF, {}, { action: action as never, rule: null });
    const execute = async (stepAction: { id?: string }): Promise<DispatchOutcome> => {
      calls += 1;
      return { outcome: 'executed', action_id: stepAction.id ?? '', response: { status: 'success', body: { ok: true }, headers: {} } } as DispatchOutcome;
    };
    const job: Job = {
      id: `${chainId}:0:1`,
      kind: 'chain-step',
      data: { namespace: 'ns', tenant: 't', chain_id: chainId, step: 0 },
      attempt: 1,
      lastTry: false,
      workerDeaths: 0,
    };

    await runs.onStepJob(job, execute);

    expect(calls).toBe(1);
    const run = await runs.get(chainId);
    expect(run.status).toBe('completed');
    expect(run.steps[0]).toMatchObject({ status: 'completed', response_body: { ok: true } });
  });
});
