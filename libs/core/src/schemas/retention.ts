import { z } from 'zod';
import { pageQuery } from './paging.js';
import { MAX_RETENTION_SECONDS, durationSeconds } from './bounds.js';
import { boundedName } from './names.js';

/** A namespace or tenant: non-empty, bounded, free of control characters. */
const Name = boundedName();

/** 1 s to 10 years (docs/retention.md, "Limits"); a pair that must keep its records longer takes compliance_hold. */
const TtlSeconds = durationSeconds(MAX_RETENTION_SECONDS);
const Description = z.string().max(1024);
const Labels = z.record(z.string().min(1).max(256), z.string().max(1024));

/**
 * POST /v1/retention. The id is always server-assigned and `enabled` starts true. Null is
 * accepted for the optional fields (clients that serialize unset fields as null) and means unset.
 * Unknown keys are refused so a misspelt TTL is an error, not a silent no-op.
 */
export const RetentionCreateInput = z.strictObject({
  namespace: Name.describe('the namespace the policy applies to (exactly; no wildcard)'),
  tenant: Name.describe('the tenant the policy applies to (exactly; no wildcard, no sub-tenants)'),
  audit_ttl_seconds: TtlSeconds.nullable().optional().describe('audit record lifetime; overrides audit.ttl_seconds for this pair'),
  state_ttl_seconds: TtlSeconds.nullable().optional().describe('lifetime of completed, failed and cancelled chain records'),
  event_ttl_seconds: TtlSeconds.nullable().optional().describe('lifetime of resolved event records'),
  compliance_hold: z.boolean().default(false).describe('true: nothing of this pair expires or is reaped'),
  description: Description.nullable().optional(),
  labels: Labels.nullable().optional(),
});
export type RetentionCreateInput = z.infer<typeof RetentionCreateInput>;

/** PUT /v1/retention/{id}: a partial update; absent fields stay, null clears an optional one. */
export const RetentionUpdateInput = z.strictObject({
  enabled: z.boolean().optional().describe('false: the policy is ignored (gateway defaults apply) and the reaper skips it'),
  audit_ttl_seconds: TtlSeconds.nullable().optional().describe('null reverts to the gateway audit TTL'),
  state_ttl_seconds: TtlSeconds.nullable().optional().describe('null: chain records are no longer reaped'),
  event_ttl_seconds: TtlSeconds.nullable().optional().describe('null: event records are no longer reaped'),
  compliance_hold: z.boolean().optional(),
  description: Description.nullable().optional().describe('null removes the description'),
  labels: Labels.nullable().optional().describe('replaces all labels; null or {} removes them'),
});
export type RetentionUpdateInput = z.infer<typeof RetentionUpdateInput>;

/** The full policy (POST, GET one, PUT). Unset optional fields are omitted, not null. */
export const RetentionPolicy = z.object({
  id: z.string(),
  namespace: z.string(),
  tenant: z.string(),
  enabled: z.boolean(),
  audit_ttl_seconds: z.number().int().optional(),
  state_ttl_seconds: z.number().int().optional(),
  event_ttl_seconds: z.number().int().optional(),
  compliance_hold: z.boolean(),
  created_at: z.string().describe('RFC 3339'),
  updated_at: z.string().describe('RFC 3339'),
  description: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional().describe('omitted when empty'),
});
export type RetentionPolicy = z.infer<typeof RetentionPolicy>;

/** A list entry: the spec's list omits the state and event TTLs, the description and the labels. */
export const RetentionPolicySummary = RetentionPolicy.omit({ state_ttl_seconds: true, event_ttl_seconds: true, description: true, labels: true });
export type RetentionPolicySummary = z.infer<typeof RetentionPolicySummary>;

export function toRetentionSummary(policy: RetentionPolicy): RetentionPolicySummary {
  const { state_ttl_seconds: _s, event_ttl_seconds: _e, description: _d, labels: _l, ...summary } = policy;
  return summary;
}

export const RetentionListQuery = z.object({
  namespace: z.string().optional().describe('only the policy of this namespace'),
  tenant: z.string().optional().describe('only the policy of this tenant'),
  ...pageQuery(),
});
export type RetentionListQuery = z.infer<typeof RetentionListQuery>;

export const RetentionList = z.object({
  policies: z.array(RetentionPolicySummary),
  count: z.number().int().describe('policies matching the filter, before limit/offset'),
});
export type RetentionList = z.infer<typeof RetentionList>;

export const RetentionIdParams = z.object({ id: z.string().min(1).max(256) });
