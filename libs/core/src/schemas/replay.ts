import { z } from 'zod';
import { AuditQuery } from './audit.js';

export const ReplayResult = z.object({
  original_action_id: z.string(),
  new_action_id: z.string(),
  /** False only when the gateway failed to dispatch; a suppressed or throttled replay still succeeded. */
  success: z.boolean(),
  error: z.string().nullable(),
  outcome: z.string().nullable().describe('the replay dispatch outcome (executed, suppressed, ...); null when it failed'),
});
export type ReplayResult = z.infer<typeof ReplayResult>;

/**
 * POST /v1/audit/replay: the GET /v1/audit filters and page (no cursor), as query parameters.
 * Strict, unlike the list's: a misspelt filter would otherwise widen what is re-dispatched.
 */
export const BulkReplayQuery = z.strictObject(AuditQuery.omit({ cursor: true }).shape);
export type BulkReplayQuery = z.infer<typeof BulkReplayQuery>;

export const BulkReplayResult = z.object({
  replayed: z.number().int(),
  failed: z.number().int(),
  skipped: z
    .number()
    .int()
    .describe(
      'matching records stored without their payload (not listed in results); records outside the caller\u2019s grants are not matched, so not counted',
    ),
  results: z.array(ReplayResult),
});

export const ActionIdParams = z.object({ action_id: z.string().min(1).max(256) });

/**
 * GET /v1/audit/{action_id} and its replay: the scope to look in. Ids are per tenant, so a caller
 * who sees several (an admin) names the one it means; without them, the newest record it may see.
 */
export const ActionRecordScopeQuery = z.strictObject({
  namespace: z.string().min(1).max(256).optional(),
  tenant: z.string().min(1).max(256).optional(),
});
export type ActionRecordScopeQuery = z.infer<typeof ActionRecordScopeQuery>;

export const ComplianceStatusBody = z.object({
  mode: z.enum(['none', 'soc2', 'hipaa']),
  sync_audit_writes: z.boolean(),
  immutable_audit: z.boolean(),
  hash_chain: z.boolean(),
});
