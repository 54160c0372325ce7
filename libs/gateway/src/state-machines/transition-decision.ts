import type { StateRefusal } from '@sluice/core';
import type { StateMachine } from './state-machine.js';

/** What a request for `target` does to an event in `current`. */
export type TransitionDecision =
  | { kind: 'move'; from: string; to: string; notify: boolean }
  | { kind: 'stay'; state: string }
  | { kind: 'refuse'; state: string; requested: string; reason: StateRefusal };

/**
 * The reference's rule: the same state is no change; a configured transition moves; anything
 * else leaves the event where it is. A state the machine does not have is refused as such.
 */
export function decideTransition(machine: StateMachine, current: string, target: string): TransitionDecision {
  if (target === current) return { kind: 'stay', state: current };
  if (!machine.hasState(target)) return { kind: 'refuse', state: current, requested: target, reason: 'unknown_state' };
  const transition = machine.transition(current, target);
  if (!transition) return { kind: 'refuse', state: current, requested: target, reason: 'transition_not_allowed' };
  return { kind: 'move', from: current, to: target, notify: transition.notify };
}
