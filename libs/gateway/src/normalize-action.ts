import { newId, type Action, type ActionInput, type Clock } from '@sluice/core';

/** Fills what the spec lets callers omit: id, created_at and an empty metadata object. */
export function normalizeAction(input: ActionInput, clock: Clock): Action {
  return {
    ...input,
    id: input.id ?? newId(),
    created_at: input.created_at ?? new Date(clock.now()).toISOString(),
    metadata: input.metadata ?? {},
  };
}
