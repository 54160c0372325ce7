import { isoString, newId, type Action, type ActionInput, type Clock } from '@sluice/core';

/**
 * Fills what the spec lets callers omit: id, created_at and an empty metadata object.
 * `nowMs` is the dispatch's own clock reading, so the clock is not read twice.
 */
export function normalizeAction(input: ActionInput, clock: Clock, nowMs?: number): Action {
  // Object.assign rather than a spread followed by more keys, which V8 runs ~20x slower. An own
  // "__proto__" key would be a prototype assignment under assign, so that rare input keeps the spread.
  const action = (Object.hasOwn(input, '__proto__') ? { ...input } : Object.assign({}, input)) as Action;
  action.id = input.id ?? newId();
  action.created_at = input.created_at ?? isoString(nowMs ?? clock.now());
  action.metadata = input.metadata ?? {};
  return action;
}
