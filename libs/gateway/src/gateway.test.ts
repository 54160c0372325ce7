import { SluiceError, systemClock } from '@sluice/core';
import { describe, expect, it, vi } from 'vitest';
import { Gateway } from './gateway.js';
import type { DispatchContext } from './pipeline/context.js';
import { Pipeline } from './pipeline/pipeline.js';
import type { Stage } from './pipeline/stage.js';

const action = { namespace: 'n', tenant: 't', provider: 'email', action_type: 'a', payload: {} };
const recorder = { recordDispatch: () => {} };

/** A rule_action stage that takes something a failure must give back, then an execute stage doing `execute`. */
function gatewayWith(execute: (ctx: DispatchContext) => never | Promise<never>, extra: { stateAvailable?: () => boolean } = {}) {
  const giveBack = vi.fn(async () => {});
  const take: Stage = {
    name: 'rule_action',
    inDryRun: false,
    run: (ctx) => {
      ctx.onFailed = giveBack;
      return undefined;
    },
  };
  const fail: Stage = { name: 'execute', inDryRun: false, run: execute };
  const gateway = new Gateway({ pipeline: new Pipeline([take, fail]), clock: systemClock, recorder, providerExists: () => true, ...extra });
  return { gateway, giveBack };
}

describe('Gateway: errors thrown by the pipeline', () => {
  it('before the provider call: gives back what the dispatch took (its dedup key) and rethrows, so the retry it asks for is not deduplicated', async () => {
    const lost = new Error('Connection is closed.');
    const { gateway, giveBack } = gatewayWith(() => {
      throw lost;
    });
    await expect(gateway.dispatch(action)).rejects.toBe(lost);
    expect(giveBack).toHaveBeenCalledOnce();
  });

  it('after the provider call started: a 500 saying so, never the error that would answer "nothing ran, retry"', async () => {
    const { gateway, giveBack } = gatewayWith((ctx) => {
      ctx.providerCalled = true;
      throw new Error('Connection is closed.');
    });
    const err = await gateway.dispatch(action).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SluiceError);
    expect(err).toMatchObject({ code: 'INTERNAL', message: expect.stringMatching(/sent to its provider/) });
    expect(giveBack).not.toHaveBeenCalled();
  });

  it('a batch answers an item that threw as an item error, and still runs the others', async () => {
    let calls = 0;
    const { gateway } = gatewayWith(() => {
      calls++;
      throw new SluiceError('STATE_UNAVAILABLE', 'the state backend is unavailable; retry later');
    });
    const results = await gateway.dispatchBatch([action, action, action]);
    expect(calls).toBe(3);
    expect(results).toEqual(
      Array(3).fill({ status: 'error', error: { message: 'STATE_UNAVAILABLE: the state backend is unavailable; retry later', code: 'STATE_UNAVAILABLE' } }),
    );
  });

  it('a batch is refused as a whole only when the state backend is known to be down before it starts', async () => {
    const { gateway } = gatewayWith(
      () => {
        throw new Error('unreached');
      },
      { stateAvailable: () => false },
    );
    await expect(gateway.dispatchBatch([action])).rejects.toMatchObject({ code: 'STATE_UNAVAILABLE' });
    await expect(gateway.dispatch(action)).rejects.toMatchObject({ code: 'STATE_UNAVAILABLE' });
  });
});
