import type { Action } from '@sluice/core';
import type { Span, Tracer } from '@sluice/telemetry';
import { describe, expect, it } from 'vitest';
import { dispatchContext, type DispatchContext } from './context.js';
import type { Stage } from './stage.js';
import { tracedStage } from './traced-stage.js';

/** A tracer that records the names of the spans started; the spans record nothing. */
function namingTracer(started: string[]): Tracer {
  const span = { setAttribute: () => span, end: () => {}, isRecording: () => false, spanContext: () => ({ traceId: '', spanId: '', traceFlags: 0 }) };
  return {
    startSpan: (name: string) => {
      started.push(name);
      return span as unknown as Span;
    },
  } as unknown as Tracer;
}

const action = { id: 'a1', namespace: 'ns', tenant: 't', provider: 'x', action_type: 'y', payload: {}, metadata: {}, created_at: '' } as Action;
const ctx: DispatchContext = { ...dispatchContext(action), provider: 'x' };

describe('traced stage', () => {
  it('starts a span for a stage with work to do, and none for one idle for the action', () => {
    let busy = true;
    let runs = 0;
    const stage: Stage = {
      name: 'quota',
      inDryRun: false,
      run: () => {
        runs++;
        return undefined;
      },
      idle: () => !busy,
    };
    const started: string[] = [];
    const traced = tracedStage(stage, namingTracer(started));
    expect(traced.run(ctx)).toBeUndefined();
    busy = false;
    expect(traced.run(ctx)).toBeUndefined();
    expect(started).toEqual(['stage quota']);
    // Idle or not, the stage itself runs.
    expect(runs).toBe(2);
  });

  it('starts a span for every run of a stage that never says it is idle', () => {
    const started: string[] = [];
    const traced = tracedStage({ name: 'execute', inDryRun: false, run: () => undefined }, namingTracer(started));
    traced.run(ctx);
    traced.run(ctx);
    expect(started).toEqual(['stage execute', 'stage execute']);
  });
});
