/** The Alertmanager-compatibility set-up the HTTP and the real-program tests share. */

/** Alerts of namespace monitoring follow their event's lifecycle. */
export const ALERT_RULES = `
rules:
  - { name: lifecycle, priority: 1, condition: { field: action.namespace, eq: monitoring }, action: { type: state_machine, state_machine: alerts } }
`;

/** What an alerting pipeline wants: firing and resolved, each move notified. */
export const ALERT_MACHINE = {
  name: 'alerts',
  initial_state: 'firing',
  states: ['firing', 'resolved'],
  transitions: [
    { from: 'firing', to: 'resolved', notify: true },
    { from: 'resolved', to: 'firing', notify: true },
  ],
};

export const ALERTMANAGER_CONFIG = {
  routes: [
    { match: { team: 'db' }, namespace: 'monitoring', tenant: { label: 'cluster', default: 'main' }, provider: 'email' },
    { match: { severity: 'page' }, namespace: 'monitoring', tenant: 'main', provider: 'email', action_type: 'page' },
    // An empty value: the label absent (or empty), as an Alertmanager route matcher reads it.
    { match: { team: 'ops', env: '' }, namespace: 'monitoring', tenant: 'ops', provider: 'email', action_type: 'ops' },
  ],
  silences: { namespace: 'monitoring', tenant: 'main' },
};
