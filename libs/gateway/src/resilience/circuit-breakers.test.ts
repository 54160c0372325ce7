import { ManualClock } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { STATE_BACKENDS, stateStores } from '../../../../test/support/state-backends.js';
import { CircuitBreakers } from './circuit-breakers.js';

describe.each(STATE_BACKENDS)('circuit breaker transitions (%s)', (backend) => {
  const stores = stateStores();

  it('tells of each opening from closed, trip, probe close and reset, and not of a failed probe re-opening it', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const [state] = await stores.open(backend, { clock, replicas: 1 });
    if (!state) throw new Error('no store');
    const told: string[] = [];
    const breakers = new CircuitBreakers({
      state,
      clock,
      breakers: new Map([['hook', { policy: { failureThreshold: 2, successThreshold: 1, recoveryMs: 1000, probeLeaseMs: 30_000 }, fallback: null }]]),
      onState: () => {},
      onTransition: (provider, to, cause) => told.push(`${provider} ${to} ${cause}`),
    });
    const call = async (result: 'success' | 'failure') => {
      const admitted = await breakers.admit('hook');
      if (admitted?.provider === 'hook') await breakers.record(admitted, result);
    };
    await call('failure');
    await call('failure');
    expect(told).toEqual(['hook open failures']);
    clock.advance(1000);
    await call('failure'); // the probe fails: open again, said once already
    clock.advance(1000);
    await call('success'); // the probe succeeds: closed
    await breakers.trip('hook');
    await breakers.reset('hook');
    expect(told).toEqual(['hook open failures', 'hook closed probe', 'hook open trip', 'hook closed reset']);
  });
});
