import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './load-config.js';

function load(yaml: string) {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-sm-')), 'sluice.yaml');
  writeFileSync(file, yaml);
  return loadConfig({ file, env: {} }).config;
}

const machine = (extra = '') => `
state_machines:
  - name: alert
    initial_state: open
    states: [open, acked, closed]
    transitions:
      - { from: open, to: acked, notify: true }
      - { from: acked, to: closed }
    timeouts:
      - { state: open, after_seconds: 30, transition_to: closed }
${extra}`;

describe('state_machines config', () => {
  it('defaults to none, and reads machines with their defaults', () => {
    expect(loadConfig({ env: {} }).config.state_machines).toEqual([]);
    expect(load(machine()).state_machines).toEqual([
      {
        name: 'alert',
        initial_state: 'open',
        states: ['open', 'acked', 'closed'],
        transitions: [
          { from: 'open', to: 'acked', notify: true },
          { from: 'acked', to: 'closed', notify: false },
        ],
        timeouts: [{ state: 'open', after_seconds: 30, transition_to: 'closed' }],
      },
    ]);
  });

  it.each([
    [
      'an initial state outside states',
      'state_machines:\n  - { name: m, initial_state: x, states: [a] }',
      /state_machines\.0\.initial_state: unknown state "x"/,
    ],
    [
      'a transition to an unknown state',
      'state_machines:\n  - { name: m, initial_state: a, states: [a], transitions: [{ from: a, to: b }] }',
      /state_machines\.0\.transitions\.0\.to: unknown state "b"/,
    ],
    [
      'a transition from an unknown state',
      'state_machines:\n  - { name: m, initial_state: a, states: [a, b], transitions: [{ from: c, to: b }] }',
      /transitions\.0\.from: unknown state "c"/,
    ],
    [
      'a timeout in an unknown state',
      'state_machines:\n  - { name: m, initial_state: a, states: [a, b], timeouts: [{ state: z, after_seconds: 5, transition_to: b }] }',
      /timeouts\.0\.state: unknown state "z"/,
    ],
    [
      'a timeout to an unknown state',
      'state_machines:\n  - { name: m, initial_state: a, states: [a], timeouts: [{ state: a, after_seconds: 5, transition_to: q }] }',
      /timeouts\.0\.transition_to: unknown state "q"/,
    ],
    [
      'a timeout into its own state',
      'state_machines:\n  - { name: m, initial_state: a, states: [a], timeouts: [{ state: a, after_seconds: 5, transition_to: a }] }',
      /must leave its state "a"/,
    ],
    [
      'two timeouts for one state',
      'state_machines:\n  - { name: m, initial_state: a, states: [a, b], timeouts: [{ state: a, after_seconds: 5, transition_to: b }, { state: a, after_seconds: 9, transition_to: b }] }',
      /timeouts\.1\.state: state "a" already has a timeout/,
    ],
    [
      'a zero timeout',
      'state_machines:\n  - { name: m, initial_state: a, states: [a, b], timeouts: [{ state: a, after_seconds: 0, transition_to: b }] }',
      /timeouts\.0\.after_seconds/,
    ],
    ['a duplicate state', 'state_machines:\n  - { name: m, initial_state: a, states: [a, a] }', /states\.1: duplicate state "a"/],
    [
      'a duplicate transition',
      'state_machines:\n  - { name: m, initial_state: a, states: [a, b], transitions: [{ from: a, to: b }, { from: a, to: b }] }',
      /transitions\.1: duplicate transition/,
    ],
    [
      'a duplicate machine name',
      'state_machines:\n  - { name: m, initial_state: a, states: [a] }\n  - { name: m, initial_state: a, states: [a] }',
      /state_machines\.1\.name: duplicate state machine name "m"/,
    ],
    [
      "an unknown key (the reference's in_state)",
      'state_machines:\n  - { name: m, initial_state: a, states: [a, b], timeouts: [{ in_state: a, after_seconds: 5, transition_to: b }] }',
      /timeouts\.0\.in_state: unknown key/,
    ],
    ['no states', 'state_machines:\n  - { name: m, initial_state: a, states: [] }', /state_machines\.0\.states/],
  ])('stops start-up on %s, naming the key', (_what, yaml, message) => {
    expect(() => load(yaml)).toThrow(message);
  });
});
