import { ManualClock, type ActionInput } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { normalizeAction } from './normalize-action.js';

/** What normalizeAction returned when it was written as one object spread. */
const spread = (input: ActionInput, id: string, createdAt: string) => ({
  ...input,
  id: input.id ?? id,
  created_at: input.created_at ?? createdAt,
  metadata: input.metadata ?? {},
});

describe('normalizeAction', () => {
  const clock = new ManualClock(Date.UTC(2026, 2, 5, 14, 30, 1, 7));
  const base = { namespace: 'ns', tenant: 't', provider: 'p', action_type: 'a', payload: { x: 1 } };

  it('fills id, created_at and metadata, keeping the keys where a spread put them', () => {
    const inputs: ActionInput[] = [
      JSON.parse(JSON.stringify(base)) as ActionInput,
      { ...base, metadata: { labels: { a: 'b' } } },
      { id: 'given', ...base, created_at: '2026-01-01T00:00:00Z' },
      { ...base, created_at: '2026-01-01T00:00:00Z', id: 'given', metadata: {} },
    ];
    for (const input of inputs) {
      const action = normalizeAction(input, clock);
      expect(Object.keys(action)).toEqual(Object.keys(spread(input, action.id, action.created_at)));
      expect(action).toStrictEqual(spread(input, action.id, '2026-03-05T14:30:01.007Z'));
      expect(action).not.toBe(input);
    }
    expect(normalizeAction(inputs[0]!, clock).id).toMatch(/^[0-9a-f-]{36}$/);
    expect(normalizeAction(inputs[0]!, clock, Date.UTC(2027, 0, 1)).created_at).toBe('2027-01-01T00:00:00.000Z');
  });

  it('copies an own __proto__ key as data, as the spread did', () => {
    const input = JSON.parse('{"namespace":"ns","tenant":"t","provider":"p","action_type":"a","payload":{},"__proto__":{"polluted":true}}') as ActionInput;
    const action = normalizeAction(input, clock);
    expect(Object.getPrototypeOf(action)).toBe(Object.prototype);
    expect((action as unknown as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.keys(action)).toEqual(Object.keys(spread(input, action.id, action.created_at)));
  });
});
