import { capturedLogLines } from '../../../../test/support/log-lines.js';
import { SluiceConfig } from '@sluice/config';
import { Metrics, createLogger } from '@sluice/telemetry';
import { describe, expect, it } from 'vitest';
import type { Feature } from '../feature.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { jobsOf, ruleActionsOf } from './features.js';
import { closeAll } from './infrastructure.js';
import { createRuntime } from './runtime.js';

const logger = createLogger({ level: 'silent', role: 'test' });

describe('the runtime builder', () => {
  it('collects every feature: stages in spec order, the durable job kinds, and closes', async () => {
    const runtime = await createRuntime(SluiceConfig.parse({}), { logger, metrics: new Metrics({ defaultMetrics: false }) });
    try {
      const features: Feature[] = Object.values(runtime.features);
      expect(features.map((f) => f.name)).toEqual([
        'quotas',
        'retention-policies',
        'audit',
        'state-machines',
        'grouping',
        'recurring',
        'approvals',
        'chains',
        'retention-reaper',
        'silences',
        'embeddings',
        'plugins',
        'llm-guardrail',
        'time-intervals',
        'rules',
        'dead-letters',
        'resilience',
        'stream',
        'bus',
        'execute',
      ]);
      expect(new Pipeline(features.flatMap((f) => f.stages ?? [])).stageNames).toEqual([
        'quota',
        'rules',
        'silences',
        'time_intervals',
        'rule_action',
        'execute',
      ]);
      // Durable BullMQ queue names: renaming one orphans the jobs already queued under it.
      expect(Object.keys(runtime.jobs).sort()).toEqual([
        'approval-expire',
        'approval-forget',
        'chain-step',
        'chain-timeout',
        'group-flush',
        'group-sweep',
        'recurring-fire',
        'retention-reap',
        'silence-reap',
        'state-timeout',
      ]);
      expect(Object.keys(ruleActionsOf(features)).sort()).toEqual(['chain', 'group', 'llm_guardrail', 'require_approval', 'state_machine']);
      const outcome = await runtime.gateway.dispatch({ namespace: 'n', tenant: 't', provider: 'email', action_type: 'a', payload: {} });
      expect(outcome).toMatchObject({ outcome: 'executed' });
    } finally {
      await runtime.close();
    }
  });

  it('refuses two features claiming one job kind or one rule action', () => {
    const job = { concurrency: 1, handler: async () => {} };
    const a: Feature = { name: 'a', jobs: { same: job }, ruleActions: { group: async () => undefined } };
    const b: Feature = { name: 'b', jobs: { same: job }, ruleActions: { group: async () => undefined } };
    expect(() => jobsOf([a, b])).toThrow(/job kind same is declared by both a and b/);
    expect(() => ruleActionsOf([a, b])).toThrow(/rule action group is declared by both a and b/);
  });

  it('names a part that is slow to close in a warning, and closes the rest after a failure', async () => {
    const { destination, lines } = capturedLogLines();
    const captured = createLogger({ level: 'debug', role: 'test', destination });
    const closed: string[] = [];
    await closeAll(
      [
        { name: 'slow', close: () => new Promise((r) => setTimeout(r, 80)).then(() => void closed.push('slow')) },
        { name: 'broken', close: () => Promise.reject(new Error('gone')) },
        { name: 'quick', close: async () => void closed.push('quick') },
      ],
      captured,
      20,
    );
    expect(closed).toEqual(['slow', 'quick']);
    expect(lines.filter((l) => l.msg === 'still closing').map((l) => l.part)).toEqual(['slow']);
    expect(lines.filter((l) => l.msg === 'close failed; continuing shutdown').map((l) => l.part)).toEqual(['broken']);
  });
});
