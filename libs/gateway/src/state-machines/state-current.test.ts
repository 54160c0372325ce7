import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Action } from '@sluice/core';
import { afterEach, describe, expect, it } from 'vitest';
import { action, logger, setup } from '../../test/state-machine-fixtures.js';
import { dispatchContext } from '../pipeline/context.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { RuleRepository } from '../rules/rule-repository.js';
import { ruleActionStage, rulesStage } from '../stages/rules-stage.js';
import { stateMachineRuleAction } from './state-machine-action.js';

const RULES = `
rules:
  - name: quiet-while-acknowledged
    priority: 1
    condition: { all: [ { field: action.action_type, eq: page }, { field: state.current, eq: acknowledged } ] }
    action: { type: suppress, reason: someone is on it }
  - name: track
    priority: 2
    condition: { field: action.action_type, eq: alert }
    action: { type: state_machine, state_machine: alert, fingerprint_fields: [payload.host] }
`;

describe('state machines in the rules stage', () => {
  const repos: RuleRepository[] = [];
  afterEach(async () => {
    await Promise.all(repos.splice(0).map((r) => r.close()));
  });

  async function stage() {
    const { service, state, clock } = setup();
    const directory = mkdtempSync(join(tmpdir(), 'sluice-sm-rules-'));
    writeFileSync(join(directory, 'rules.yaml'), RULES);
    const rules = new RuleRepository({ state, clock, directory, env: { wasmRuntime: false, embeddingProvider: false }, logger, syncIntervalMs: 60_000 });
    await rules.start();
    repos.push(rules);
    const pipeline = new Pipeline([
      rulesStage({ rules, state, clock, logger, currentState: (ctx) => service.currentState(ctx.action) }),
      ruleActionStage({ state, clock, handlers: { state_machine: stateMachineRuleAction(service) } }),
    ]);
    return { service, run: (a: Action) => pipeline.run(dispatchContext(a)) };
  }

  it('runs the state_machine rule action, the provider not called', async () => {
    const { run, service } = await stage();
    expect(await run(action({ payload: { host: 'db-1' }, status: 'acknowledged' }))).toMatchObject({
      outcome: 'state_changed',
      previous_state: 'open',
      new_state: 'acknowledged',
    });
    expect((await service.list('ns', 't', { limit: 10 })).events).toHaveLength(1);
  });

  it('lets conditions test state.current of the event the action names', async () => {
    const { run, service } = await stage();
    await run(action({ fingerprint: 'fp', status: 'acknowledged' }));
    expect(await run(action({ action_type: 'page', fingerprint: 'fp' }))).toMatchObject({ outcome: 'suppressed', rule: 'quiet-while-acknowledged' });
    // Another event, or none named: the condition does not match and the action goes on.
    expect(await run(action({ action_type: 'page', fingerprint: 'other' }))).toBeUndefined();
    expect(await run(action({ action_type: 'page' }))).toBeUndefined();
    await service.transition('ns', 't', 'fp', 'resolved');
    expect(await run(action({ action_type: 'page', fingerprint: 'fp' }))).toBeUndefined();
  });
});
