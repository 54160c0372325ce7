import { z } from 'zod';
import { AuditDeferred } from './audit-deferred.js';
import { ERROR_CODES, FAILURE_CODE_LIST } from '../errors.js';
import { StateChangedOutcome } from './events.js';
import { GroupedOutcome } from './groups.js';

/** What a provider returned. `status` is success, failure or partial; body is JSON, headers are strings. */
export const ProviderResponse = z.object({
  status: z.enum(['success', 'failure', 'partial']),
  body: z.unknown(),
  headers: z.record(z.string(), z.string()),
});
export type ProviderResponse = z.infer<typeof ProviderResponse>;

export const FailureInfo = z.object({
  code: z.enum(FAILURE_CODE_LIST).describe('a dispatch failure code (docs/errors.md, "Dispatch failure codes")'),
  message: z.string(),
  retryable: z.boolean(),
  attempts: z.number().int(),
});
export type FailureInfo = z.infer<typeof FailureInfo>;

const base = { action_id: z.string(), audit: AuditDeferred };

/** Dispatch outcomes, internally tagged by `outcome` (api-decisions.md "Dispatch"). */
const ExecutedOutcome = z.object({ outcome: z.literal('executed'), ...base, response: ProviderResponse });
const DeduplicatedOutcome = z.object({ outcome: z.literal('deduplicated'), ...base });
const SuppressedOutcome = z.object({
  outcome: z.literal('suppressed'),
  ...base,
  rule: z.string().nullable().describe('the suppressing rule; null when a silence suppressed it'),
  reason: z.string().optional().describe("the rule's reason, or mute_time_interval / active_time_interval"),
  silence_id: z.string().optional().describe('the silence that suppressed it'),
  interval: z.string().optional().describe("the matched rule's time interval that suppressed it"),
});
const ReroutedOutcome = z.object({
  outcome: z.literal('rerouted'),
  ...base,
  original_provider: z.string(),
  new_provider: z.string(),
  response: ProviderResponse,
});
const QuotaInfo = z.object({
  id: z.string(),
  limit: z.number().int(),
  used: z.number().int(),
  window: z.string(),
  resets_at: z.string(),
});
const ThrottledOutcome = z.object({
  outcome: z.literal('throttled'),
  ...base,
  rule: z.string().nullable().optional(),
  message: z.string().optional(),
  reason: z.string().optional(),
  quota: QuotaInfo.optional(),
  retry_after_seconds: z.number().int(),
});
const PendingApprovalOutcome = z.object({
  outcome: z.literal('pending_approval'),
  ...base,
  approval_id: z.string(),
  expires_at: z.string(),
  approve_url: z.string(),
  reject_url: z.string(),
  notification_sent: z.boolean(),
});
const ChainStartedOutcome = z.object({
  outcome: z.literal('chain_started'),
  ...base,
  chain_id: z.string(),
  chain_name: z.string(),
  total_steps: z.number().int(),
  first_step: z.string(),
});
const FailedOutcome = z.object({ outcome: z.literal('failed'), ...base, error: FailureInfo });
const DryRunOutcome = z.object({
  outcome: z.literal('dry_run'),
  ...base,
  verdict: z.string(),
  matched_rule: z.string().nullable(),
  would_be_provider: z.string(),
  silence_id: z.string().optional().describe('a silence would suppress the action'),
  interval: z.string().optional().describe("the matched rule's time interval would suppress the action"),
  reason: z.enum(['mute_time_interval', 'active_time_interval']).optional(),
});

export const DispatchOutcome = z.discriminatedUnion('outcome', [
  ExecutedOutcome,
  DeduplicatedOutcome,
  SuppressedOutcome,
  ReroutedOutcome,
  ThrottledOutcome,
  FailedOutcome,
  PendingApprovalOutcome,
  ChainStartedOutcome,
  DryRunOutcome,
  StateChangedOutcome,
  GroupedOutcome,
]);
export type DispatchOutcome = z.infer<typeof DispatchOutcome>;

export const BatchItemResult = z.union([
  z.object({ status: z.literal('success'), outcome: DispatchOutcome }),
  z.object({
    status: z.literal('error'),
    error: z.object({
      message: z.string(),
      code: z
        .enum([...ERROR_CODES, 'PROVIDER_NOT_FOUND'])
        .describe('PROVIDER_NOT_FOUND for an unknown provider, else the code of the error that stopped the item (docs/errors.md)'),
    }),
  }),
]);
export const BatchResponse = z.object({ results: z.array(BatchItemResult) });
export type BatchItemResult = z.infer<typeof BatchItemResult>;

export const ErrorBody = z.object({
  error: z.string(),
  code: z.enum(ERROR_CODES).describe('stable; clients branch on it (docs/errors.md)'),
  details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  retry_after: z.number().int().optional().describe('RATE_LIMITED and STATE_UNAVAILABLE: seconds to wait, as the Retry-After header'),
});
