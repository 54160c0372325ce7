import { ManualClock, type Action, type QuotaPolicy } from '@sluice/core';
import { MemoryStateStore } from '@sluice/state';
import { createLogger } from '@sluice/telemetry';
import { describe, expect, it } from 'vitest';
import { dispatchContext, type DispatchContext } from '../pipeline/context.js';
import { quotaStage } from '../stages/quota-stage.js';
import { QuotaIndex } from './quota-index.js';

const HOUR = 3_600_000;
const logger = createLogger({ level: 'silent', role: 'test' });

function policy(over: Partial<QuotaPolicy> = {}): QuotaPolicy {
  return { id: 'p', namespace: 'ns', tenant: 't', max_actions: 3, window: 'hourly', overage_behavior: 'block', enabled: true, source: 'config', ...over };
}

function setup(policies: QuotaPolicy[], start = Date.UTC(2026, 2, 5, 14, 30)) {
  const clock = new ManualClock(start);
  const state = new MemoryStateStore({ clock });
  const index = new QuotaIndex(policies);
  const exceeded: string[] = [];
  const stage = quotaStage({ quotas: index, state, clock, logger, onExceeded: (p, b) => exceeded.push(`${p.id}:${b}`) });
  let n = 0;
  const run = (namespace = 'ns', tenant = 't') => {
    const action = { id: `a${++n}`, namespace, tenant, provider: 'x', action_type: 'y', payload: {}, metadata: {}, created_at: '' } as Action;
    const ctx: DispatchContext = { ...dispatchContext(action), provider: 'x' };
    return stage.run(ctx);
  };
  return { clock, state, run, exceeded, stage };
}

describe('quota stage', () => {
  it('admits max_actions per window, then throttles with the quota details', async () => {
    const { run, exceeded } = setup([policy()]);
    for (let i = 0; i < 3; i++) expect(await run()).toBeUndefined();
    expect(await run()).toEqual({
      outcome: 'throttled',
      action_id: 'a4',
      reason: 'quota_exceeded',
      quota: { id: 'p', limit: 3, used: 3, window: 'hourly', resets_at: '2026-03-05T15:00:00.000Z' },
      retry_after_seconds: 1800,
    });
    expect(exceeded).toEqual(['p:block']);
  });

  it('does not count blocked attempts', async () => {
    const { run, state, clock } = setup([policy()]);
    for (let i = 0; i < 10; i++) await run();
    const key = { kind: 'quota', namespace: 'ns', tenant: 't', id: `p:hourly:${Date.UTC(2026, 2, 5, 14)}` };
    expect((await state.readWindow(key)).count).toBe(3);
    // The counter expires at the window's end, not later.
    expect((await state.readWindow(key)).resetAtMs).toBe(clock.now() + HOUR / 2);
  });

  it('starts afresh when the clock crosses into the next window', async () => {
    const { run, clock } = setup([policy()]);
    for (let i = 0; i < 3; i++) await run();
    expect(await run()).toMatchObject({ outcome: 'throttled' });
    clock.advance(HOUR / 2 - 1);
    expect(await run()).toMatchObject({ outcome: 'throttled', retry_after_seconds: 1 });
    clock.advance(1);
    expect(await run()).toBeUndefined();
  });

  it('warn: executes everything, counting, and reports each action over the limit', async () => {
    const { run, exceeded, state } = setup([policy({ overage_behavior: 'warn' })]);
    for (let i = 0; i < 5; i++) expect(await run()).toBeUndefined();
    expect(exceeded).toEqual(['p:warn', 'p:warn']);
    expect((await state.readWindow({ kind: 'quota', namespace: 'ns', tenant: 't', id: `p:hourly:${Date.UTC(2026, 2, 5, 14)}` })).count).toBe(5);
  });

  it('counts each tenant separately under a * policy', async () => {
    const { run } = setup([policy({ tenant: '*', max_actions: 1 })]);
    expect(await run('ns', 'a')).toBeUndefined();
    expect(await run('ns', 'b')).toBeUndefined();
    expect(await run('ns', 'a')).toMatchObject({ outcome: 'throttled' });
  });

  it('leaves actions no policy governs alone, and applies the most specific policy', async () => {
    const { run } = setup([policy({ id: 'strict', max_actions: 1 }), policy({ id: 'loose', tenant: '*', max_actions: 100 })]);
    expect(await run('other', 't')).toBeUndefined();
    expect(await run('ns', 't')).toBeUndefined();
    expect(await run('ns', 't')).toMatchObject({ outcome: 'throttled', quota: { id: 'strict' } });
    expect(await run('ns', 'u')).toBeUndefined();
  });

  it('is skipped by dry runs', () => {
    expect(setup([policy()]).stage.inDryRun).toBe(false);
  });
});
