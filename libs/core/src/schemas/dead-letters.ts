import { z } from 'zod';
import { StoredActionInput } from './action.js';
import { DispatchOutcome, FailureInfo } from './outcome.js';

/** An action whose provider kept failing with a retryable error until the executor's retries ran out. */
export const DeadLetter = z.object({
  id: z.string().describe('entry id'),
  namespace: z.string(),
  tenant: z.string(),
  provider: z.string().describe('the provider that failed (the reroute target when a rule rerouted it)'),
  action_type: z.string(),
  action_id: z.string().describe('the failed dispatch; its audit record has this id'),
  action: StoredActionInput.describe('the action as dispatched, what a retry sends again'),
  error: FailureInfo.describe('the last failure'),
  attempts: z.number().int().describe('provider attempts so far, retries of this entry included'),
  retries: z.number().int().describe('times this entry was retried from the queue'),
  created_at: z.string(),
  updated_at: z.string(),
});
export type DeadLetter = z.infer<typeof DeadLetter>;

const Limit = z.number().int().min(1).max(1000);

export const DeadLetterFilter = z.object({
  namespace: z.string().optional(),
  tenant: z.string().optional().describe('exact tenant'),
  provider: z.string().optional(),
  error_code: z.string().optional(),
});
export type DeadLetterFilter = z.infer<typeof DeadLetterFilter>;

export const DeadLetterListQuery = DeadLetterFilter.extend({
  limit: Limit.default(50),
  offset: z.number().int().min(0).default(0),
});
export type DeadLetterListQuery = z.infer<typeof DeadLetterListQuery>;

export const DeadLetterList = z.object({
  entries: z.array(DeadLetter),
  count: z.number().int().describe('entries matching the filters, before limit/offset'),
});

export const DeadLetterStats = z.object({
  enabled: z.boolean(),
  count: z.number().int(),
  by_tenant: z.record(z.string(), z.number().int()),
  by_provider: z.record(z.string(), z.number().int()),
  by_error_code: z.record(z.string(), z.number().int()),
});
export type DeadLetterStats = z.infer<typeof DeadLetterStats>;

/** POST /v1/dlq/drain: removes and returns up to `limit` matching entries, oldest first. */
export const DeadLetterDrainInput = z.strictObject({
  ...DeadLetterFilter.shape,
  limit: Limit.default(100),
});
export type DeadLetterDrainInput = z.infer<typeof DeadLetterDrainInput>;

export const DeadLetterDrained = z.object({ entries: z.array(DeadLetter), count: z.number().int() });

export const DeadLetterRetried = z.object({
  outcome: DispatchOutcome.describe('the outcome of dispatching the action again'),
  removed: z.boolean().describe('true when it succeeded (executed or rerouted) and the entry was removed'),
});

export const DeadLetterIdParams = z.object({ id: z.string().min(1).max(256) });
