import type { RecurringAction } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { EARLY_TOLERANCE_MS, MISFIRE_GRACE_MS, planOccurrence, upcoming } from './occurrence.js';
import { occurrenceActionId } from './occurrence-action.js';

const at = (iso: string) => Date.parse(iso);

function record(over: Partial<RecurringAction> = {}): RecurringAction {
  return {
    id: 'r1',
    namespace: 'ns',
    tenant: 't',
    cron_expr: '*/5 * * * *',
    timezone: 'UTC',
    enabled: true,
    provider: 'email',
    action_type: 'send',
    payload: {},
    metadata: {},
    next_execution: '2026-01-01T00:05:00.000Z',
    last_executed_at: null,
    execution_count: 0,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

describe('planOccurrence', () => {
  it('fires the due occurrence and moves next_execution to the following one', () => {
    const plan = planOccurrence(record(), at('2026-01-01T00:05:00.020Z'));
    expect(plan).toEqual({
      kind: 'fire',
      slot: at('2026-01-01T00:05:00Z'),
      record: record({ execution_count: 1, last_executed_at: '2026-01-01T00:05:00.020Z', next_execution: '2026-01-01T00:10:00.000Z' }),
    });
  });

  it('a second delivery of the same occurrence finds it claimed', () => {
    const first = planOccurrence(record(), at('2026-01-01T00:05:00.020Z'));
    if (first.kind !== 'fire') throw new Error('expected a fire');
    expect(planOccurrence(first.record, at('2026-01-01T00:05:03Z'))).toEqual({ kind: 'idle', reason: 'not-due' });
  });

  it('takes a slightly early delivery for its occurrence, but not an earlier one', () => {
    const slot = at('2026-01-01T00:05:00Z');
    expect(planOccurrence(record(), slot - EARLY_TOLERANCE_MS)).toMatchObject({ kind: 'fire', slot, record: { next_execution: '2026-01-01T00:10:00.000Z' } });
    expect(planOccurrence(record(), slot - EARLY_TOLERANCE_MS - 1)).toEqual({ kind: 'idle', reason: 'not-due' });
  });

  it('does nothing while paused', () => {
    expect(planOccurrence(record({ enabled: false, next_execution: null }), at('2026-01-01T00:05:00Z'))).toEqual({ kind: 'idle', reason: 'disabled' });
  });

  it('a late delivery fires the latest due occurrence only; earlier missed ones are skipped', () => {
    const plan = planOccurrence(record(), at('2026-01-01T00:15:30Z'));
    expect(plan).toMatchObject({ kind: 'fire', slot: at('2026-01-01T00:15:00Z'), record: { execution_count: 1, next_execution: '2026-01-01T00:20:00.000Z' } });
  });

  it('skips an occurrence later than the grace (downtime) without firing', () => {
    const now = at('2026-01-01T00:05:00Z') + MISFIRE_GRACE_MS + 1;
    expect(planOccurrence(record({ cron_expr: '0 * * * *', next_execution: '2026-01-01T00:05:00.000Z' }), now)).toEqual({
      kind: 'skip',
      reason: 'missed',
      record: record({ cron_expr: '0 * * * *', next_execution: '2026-01-01T01:00:00.000Z' }),
    });
  });

  it('max_executions: the last execution finishes the action', () => {
    const plan = planOccurrence(record({ max_executions: 2, execution_count: 1 }), at('2026-01-01T00:05:00Z'));
    expect(plan).toMatchObject({ kind: 'fire', record: { execution_count: 2, next_execution: null, enabled: false } });
  });

  it('end_date: the last occurrence before it fires, then the action finishes', () => {
    const ends_at = '2026-01-01T00:07:00.000Z';
    expect(planOccurrence(record({ ends_at }), at('2026-01-01T00:05:00Z'))).toMatchObject({ kind: 'fire', record: { next_execution: null, enabled: false } });
    // An occurrence already past the end date (the date was moved) finishes it without firing.
    expect(planOccurrence(record({ ends_at: '2026-01-01T00:04:00.000Z' }), at('2026-01-01T00:05:00Z'))).toMatchObject({
      kind: 'skip',
      reason: 'ended',
      record: { next_execution: null, enabled: false },
    });
  });
});

describe('upcoming', () => {
  it('honours max_executions and end_date', () => {
    const now = at('2026-01-01T00:00:00Z');
    expect(upcoming(record(), now)).toBe(at('2026-01-01T00:05:00Z'));
    expect(upcoming(record({ max_executions: 3, execution_count: 3 }), now)).toBeNull();
    expect(upcoming(record({ ends_at: '2026-01-01T00:05:00.000Z' }), now)).toBe(at('2026-01-01T00:05:00Z'));
    expect(upcoming(record({ ends_at: '2026-01-01T00:04:59.999Z' }), now)).toBeNull();
  });
});

describe('occurrenceActionId', () => {
  it('is a UUID-shaped id, the same for one occurrence and different for the next', () => {
    const a = occurrenceActionId('r1', 1000);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(occurrenceActionId('r1', 1000)).toBe(a);
    expect(occurrenceActionId('r1', 2000)).not.toBe(a);
    expect(occurrenceActionId('r2', 1000)).not.toBe(a);
  });
});
