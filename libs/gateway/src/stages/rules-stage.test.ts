import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '@sluice/core';
import { MemoryStateStore } from '@sluice/state';
import { createLogger } from '@sluice/telemetry';
import { afterEach, describe, expect, it } from 'vitest';
import { capturedLogLines } from '../../../../test/support/log-lines.js';
import { action } from '../../test/state-machine-fixtures.js';
import { dispatchContext } from '../pipeline/context.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { RuleRepository } from '../rules/rule-repository.js';
import { rulesStage } from './rules-stage.js';

const BROKEN = `
rules:
  - name: yields-a-string
    priority: 1
    expression: 'action.payload.flag'
    action: { type: suppress, reason: flagged }
`;

describe('the rules stage and a rule that fails on every dispatch', () => {
  const repos: RuleRepository[] = [];
  afterEach(async () => {
    await Promise.all(repos.splice(0).map((r) => r.close()));
  });

  it('logs it once per rule per 30 s, with how many failures it held back, and never the payload', async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 5));
    const state = new MemoryStateStore({ clock });
    const { destination, lines } = capturedLogLines();
    const logger = createLogger({ level: 'warn', role: 'test', destination });
    const directory = mkdtempSync(join(tmpdir(), 'sluice-rule-errors-'));
    writeFileSync(join(directory, 'broken.cel'), BROKEN);
    const rules = new RuleRepository({ state, clock, directory, env: { wasmRuntime: false, embeddingProvider: false }, logger, syncIntervalMs: 60_000 });
    await rules.start();
    repos.push(rules);
    let errors = 0;
    const pipeline = new Pipeline([rulesStage({ rules, state, clock, logger, onRuleError: () => errors++ })]);
    const run = () => pipeline.run(dispatchContext(action({ payload: { flag: 'card-4111111111111111' } })));
    for (let i = 0; i < 3; i++) expect(await run()).toBeUndefined();
    clock.advance(30_000);
    await run();
    await new Promise((r) => setImmediate(r));
    const warned = lines.filter((l) => l.msg === 'rule evaluation failed; treated as not matching');
    expect(errors).toBe(4);
    expect(warned.map((l) => [l.rule, l.suppressed])).toEqual([
      ['yields-a-string', 0],
      ['yields-a-string', 2],
    ]);
    expect(JSON.stringify(lines)).not.toContain('4111');
    await state.close();
  });
});
