import { GLOBAL_SCOPE, type StateKey } from '@sluice/state';

/** State keys of the shared rule configuration (API rules, enabled flags, generation). */
export const RULES_CHANNEL = 'rules';

export function apiRuleKey(name: string): StateKey {
  return { kind: 'rule', ...GLOBAL_SCOPE, id: name };
}

export function enabledFlagKey(name: string): StateKey {
  return { kind: 'rule-enabled', ...GLOBAL_SCOPE, id: name };
}

/** Changes on every edit or reload; replicas poll it as a backstop for a missed pub/sub message. */
export const RULES_GENERATION_KEY: StateKey = { kind: 'rules-generation', ...GLOBAL_SCOPE, id: 'current' };
