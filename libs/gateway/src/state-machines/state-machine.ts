import type { StateMachineConfig } from '@sluice/config';

export interface StateTimeout {
  afterMs: number;
  transitionTo: string;
}

/**
 * One configured machine, compiled for lookups. The config schema has already checked that
 * every state named by a transition or timeout exists, so these answers need no validation.
 */
export class StateMachine {
  readonly name: string;
  readonly initialState: string;
  private readonly states: ReadonlySet<string>;
  /** Keyed by JSON [from, to]: unambiguous whatever the state names contain. */
  private readonly transitions: ReadonlyMap<string, { notify: boolean }>;
  private readonly leaving: ReadonlySet<string>;
  private readonly timeouts: ReadonlyMap<string, StateTimeout>;

  constructor(config: StateMachineConfig) {
    this.name = config.name;
    this.initialState = config.initial_state;
    this.states = new Set(config.states);
    this.transitions = new Map(config.transitions.map((t) => [JSON.stringify([t.from, t.to]), { notify: t.notify }]));
    this.leaving = new Set(config.transitions.map((t) => t.from));
    this.timeouts = new Map(config.timeouts.map((t) => [t.state, { afterMs: t.after_seconds * 1000, transitionTo: t.transition_to }]));
  }

  hasState(state: string): boolean {
    return this.states.has(state);
  }

  /** The configured transition from → to, if the machine allows it. */
  transition(from: string, to: string): { notify: boolean } | undefined {
    return this.transitions.get(JSON.stringify([from, to]));
  }

  timeoutOf(state: string): StateTimeout | undefined {
    return this.timeouts.get(state);
  }

  /** Nothing can move an event out of this state: no transition leaves it and no timeout fires in it. */
  isTerminal(state: string): boolean {
    return !this.leaving.has(state) && !this.timeouts.has(state);
  }
}

/** The configured machines by name. */
export class StateMachineRegistry {
  private readonly byName: ReadonlyMap<string, StateMachine>;

  constructor(configs: readonly StateMachineConfig[]) {
    this.byName = new Map(configs.map((c) => [c.name, new StateMachine(c)]));
  }

  get(name: string): StateMachine | undefined {
    return this.byName.get(name);
  }

  get size(): number {
    return this.byName.size;
  }
}
