import { describe, expect, it } from 'vitest';
import { ALERT } from '../../test/state-machine-fixtures.js';
import { StateMachine, StateMachineRegistry } from './state-machine.js';
import { decideTransition } from './transition-decision.js';

const machine = new StateMachine(ALERT);

describe('decideTransition', () => {
  it('moves along configured transitions with their notify flag', () => {
    expect(decideTransition(machine, 'open', 'acknowledged')).toEqual({ kind: 'move', from: 'open', to: 'acknowledged', notify: true });
    expect(decideTransition(machine, 'open', 'resolved')).toEqual({ kind: 'move', from: 'open', to: 'resolved', notify: false });
  });

  it('stays for the same state and refuses the rest, saying why', () => {
    expect(decideTransition(machine, 'open', 'open')).toEqual({ kind: 'stay', state: 'open' });
    expect(decideTransition(machine, 'resolved', 'open')).toEqual({ kind: 'refuse', state: 'resolved', requested: 'open', reason: 'transition_not_allowed' });
    expect(decideTransition(machine, 'open', 'escalated')).toMatchObject({ kind: 'refuse', reason: 'transition_not_allowed' });
    expect(decideTransition(machine, 'open', 'gone')).toMatchObject({ kind: 'refuse', reason: 'unknown_state' });
  });
});

describe('StateMachine', () => {
  it('knows timeouts and terminal states', () => {
    expect(machine.timeoutOf('open')).toEqual({ afterMs: 60_000, transitionTo: 'escalated' });
    expect(machine.timeoutOf('acknowledged')).toBeUndefined();
    expect(machine.isTerminal('resolved')).toBe(true);
    expect(machine.isTerminal('acknowledged')).toBe(false);
    expect(new StateMachineRegistry([ALERT]).get('alert')?.initialState).toBe('open');
    expect(new StateMachineRegistry([ALERT]).get('other')).toBeUndefined();
  });
});
