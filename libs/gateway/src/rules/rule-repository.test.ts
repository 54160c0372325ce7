import { ManualClock } from '@sluice/core';
import type { StateStore } from '@sluice/state';
import { createLogger } from '@sluice/telemetry';
import { afterAll, describe, expect, it } from 'vitest';
import { STATE_BACKENDS, stateStores } from '../../../../test/support/state-backends.js';
import { RuleRepository } from './rule-repository.js';

const logger = createLogger({ level: 'silent', role: 'test' });
/** One replica's rules: no rules directory, only the API rules and flags shared through `state`. */
const repository = (state: StateStore, clock: ManualClock) =>
  new RuleRepository({ state, clock, directory: null, env: { wasmRuntime: false, embeddingProvider: false }, logger, syncIntervalMs: 60_000 });
const rule = (reason: string) => ({ name: 'hold', priority: 1, condition: { field: 'action.tenant', eq: 'acme' }, action: { type: 'suppress', reason } });

describe.each(STATE_BACKENDS)('rule repository (%s)', (backend) => {
  const stores = stateStores();
  const repositories: RuleRepository[] = [];
  afterAll(async () => {
    await Promise.all(repositories.map((r) => r.close()));
  });

  it('a replace on a replica that has not seen the rule yet is a replace (not created), and keeps the rule disabled', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const [stateA, stateB] = await stores.open(backend, { clock, replicas: 2 });
    if (!stateA || !stateB) throw new Error('no replicas');
    const a = repository(stateA, clock);
    await a.start();
    repositories.push(a);
    await a.create(rule('first'));
    await a.setEnabled('hold', false);
    // b read the shared rules before a made this one: its own copy does not have it.
    const b = repository(stateB, clock);
    expect((await b.put('hold', rule('second'))).created).toBe(false);
    await b.start();
    repositories.push(b);
    const held = b.current.list().find((r) => r.name === 'hold');
    expect(held && b.isEnabled(held)).toBe(false);
    expect(held?.definition).toMatchObject({ action: { reason: 'second' } });
  });

  it('disables a rule made on another replica a moment ago, before this one has read it', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const [stateA, stateB] = await stores.open(backend, { clock, replicas: 2 });
    if (!stateA || !stateB) throw new Error('no replicas');
    const a = repository(stateA, clock);
    const b = repository(stateB, clock);
    await a.create(rule('fresh'));
    await b.setEnabled('hold', false);
    await expect(b.setEnabled('never-made', false)).rejects.toThrow(/rule not found/);
    await a.start();
    repositories.push(a, b);
    const held = a.current.list().find((r) => r.name === 'hold');
    expect(held && a.isEnabled(held)).toBe(false);
  });
});
