import { z } from 'zod';
import { pageQuery } from './paging.js';
import { StoredActionInput } from './action.js';
import { DispatchOutcome } from './outcome.js';

export const ApprovalStatus = z.enum(['pending', 'approved', 'rejected', 'expired']);
export type ApprovalStatus = z.infer<typeof ApprovalStatus>;

/** A human decision an action waits for (a `require_approval` rule matched it). */
export const Approval = z.object({
  id: z.string().describe('approval id'),
  namespace: z.string(),
  tenant: z.string(),
  action_id: z.string().describe('the waiting action; its audit records (request, execution) share this id'),
  action: StoredActionInput.describe('the action as dispatched; what an approval executes'),
  rule: z.string().describe('the rule that required approval'),
  message: z.string().nullable(),
  status: ApprovalStatus,
  created_at: z.string(),
  expires_at: z.string(),
  decided_at: z.string().nullable(),
  decided_by: z.string().nullable().describe('who decided: a signed link (`link:<kid>`, the key that verified it) or a signed-in caller (`caller:<id>`)'),
  notification_sent: z.boolean(),
  outcome: DispatchOutcome.nullable().describe('what executing it gave, once approved'),
  trace: z
    .record(z.string(), z.string())
    .optional()
    .describe('W3C trace context (traceparent, tracestate) of the dispatch that asked for approval, with tracing on: its execution links to it'),
});
export type Approval = z.infer<typeof Approval>;

export const ApprovalListQuery = z.object({
  namespace: z.string().optional(),
  tenant: z.string().optional().describe('exact tenant'),
  status: ApprovalStatus.default('pending'),
  ...pageQuery(),
});
export type ApprovalListQuery = z.infer<typeof ApprovalListQuery>;

export const ApprovalList = z.object({ approvals: z.array(Approval), count: z.number().int().describe('approvals matching the filters, before limit/offset') });

// Lookup keys, not new names: an approval an earlier release stored under names this one refuses is still found.
export const ApprovalParams = z.object({ namespace: z.string().min(1).max(256), tenant: z.string().min(1).max(256), id: z.string().min(1).max(256) });
export type ApprovalParams = z.infer<typeof ApprovalParams>;

/** The signed link's query: what the approve and reject URLs carry. */
export const ApprovalLinkQuery = z.object({
  sig: z.string().min(1).max(256).describe('HMAC-SHA256 (hex) of the approval, signed by the gateway'),
  expires_at: z
    .string()
    .regex(/^\d{1,12}$/, 'unix seconds')
    .describe('when the link stops working (unix seconds)'),
  kid: z.string().min(1).max(128).optional().describe('the signing key id'),
});
export type ApprovalLinkQuery = z.infer<typeof ApprovalLinkQuery>;

export const ApprovalDecision = z.object({
  id: z.string(),
  status: ApprovalStatus,
  outcome: DispatchOutcome.nullable().describe('the execution outcome of an approval; null for a rejection'),
});

/** A decision by an authenticated caller (the admin UI): the role and grants are the credential, not a signed link. */
export const ApprovalCallerDecision = z.object({
  decision: z.enum(['approve', 'reject']),
});
export type ApprovalCallerDecision = z.infer<typeof ApprovalCallerDecision>;
