import { z } from 'zod';
import { MAX_STATE_TIMEOUT_SECONDS, boundedName, durationSeconds } from '@sluice/core';

/**
 * `state_machines:` — event lifecycles. Each machine is checked as a whole at start-up, so a
 * transition or timeout naming a state the machine does not have stops start-up with its path
 * instead of surfacing as a refused transition in production.
 */

const StateName = boundedName();

const StateMachineTransitionConfig = z.strictObject({
  from: StateName,
  to: StateName,
  /** Reported as `notify` on the state_changed outcome when this transition is taken. */
  notify: z.boolean().default(false),
});

const StateMachineTimeoutConfig = z.strictObject({
  state: StateName,
  /** A year at most: long enough for any lifecycle, short enough to stay an exact delay in ms. */
  after_seconds: durationSeconds(MAX_STATE_TIMEOUT_SECONDS),
  transition_to: StateName,
});

export const StateMachineConfig = z
  .strictObject({
    name: StateName,
    initial_state: StateName,
    states: z.array(StateName).min(1),
    transitions: z.array(StateMachineTransitionConfig).default([]),
    timeouts: z.array(StateMachineTimeoutConfig).default([]),
  })
  .superRefine((m, ctx) => {
    const states = new Set<string>();
    m.states.forEach((s, i) => {
      if (states.has(s)) ctx.addIssue({ code: 'custom', path: ['states', i], message: `duplicate state "${s}"` });
      states.add(s);
    });
    const unknown = (path: (string | number)[], state: string) =>
      ctx.addIssue({ code: 'custom', path, message: `unknown state "${state}" (not in states of machine "${m.name}")` });
    if (!states.has(m.initial_state)) unknown(['initial_state'], m.initial_state);
    const pairs = new Set<string>();
    m.transitions.forEach((t, i) => {
      if (!states.has(t.from)) unknown(['transitions', i, 'from'], t.from);
      if (!states.has(t.to)) unknown(['transitions', i, 'to'], t.to);
      if (t.from === t.to)
        ctx.addIssue({ code: 'custom', path: ['transitions', i, 'to'], message: `a transition must change the state ("${t.from}" to itself)` });
      const pair = JSON.stringify([t.from, t.to]);
      if (pairs.has(pair)) ctx.addIssue({ code: 'custom', path: ['transitions', i], message: `duplicate transition "${t.from}" → "${t.to}"` });
      pairs.add(pair);
    });
    const timed = new Set<string>();
    m.timeouts.forEach((t, i) => {
      if (!states.has(t.state)) unknown(['timeouts', i, 'state'], t.state);
      if (!states.has(t.transition_to)) unknown(['timeouts', i, 'transition_to'], t.transition_to);
      // A timeout back into its own state would re-arm itself forever.
      if (t.state === t.transition_to)
        ctx.addIssue({ code: 'custom', path: ['timeouts', i, 'transition_to'], message: `a timeout must leave its state "${t.state}"` });
      if (timed.has(t.state)) ctx.addIssue({ code: 'custom', path: ['timeouts', i, 'state'], message: `state "${t.state}" already has a timeout` });
      timed.add(t.state);
    });
  });
export type StateMachineConfig = z.infer<typeof StateMachineConfig>;

export const StateMachinesConfig = z
  .array(StateMachineConfig)
  .default([])
  .superRefine((list, ctx) => {
    const names = new Set<string>();
    list.forEach((m, i) => {
      if (names.has(m.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate state machine name "${m.name}"` });
      names.add(m.name);
    });
  });
export type StateMachinesConfig = z.infer<typeof StateMachinesConfig>;
