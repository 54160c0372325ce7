import { z } from 'zod';
import { pageQuery } from './paging.js';
import { MAX_ACTIONS_PER_WINDOW, boundedCount } from './bounds.js';
import { boundedName } from './names.js';

/** A policy scope or id: non-empty, bounded, free of control characters. `*` as a scope matches any value. */
const Name = boundedName();

/** Windows are aligned to UTC calendar boundaries: the hour, the day, the ISO week (Monday), the month. */
export const QuotaWindowName = z.enum(['hourly', 'daily', 'weekly', 'monthly']);
export type QuotaWindowName = z.infer<typeof QuotaWindowName>;

/** block: over-quota actions are throttled; warn: they execute, and are logged and counted. */
export const QuotaOverage = z.enum(['block', 'warn']);
export type QuotaOverage = z.infer<typeof QuotaOverage>;

/** Shared with `quotas.policies` of the config file. */
export const QuotaMaxActions = boundedCount(MAX_ACTIONS_PER_WINDOW).describe(`actions allowed per window (1 to ${MAX_ACTIONS_PER_WINDOW})`);
const Description = z.string().max(1024);

/** POST /v1/quotas. Unknown keys are refused so a scope the gateway does not support (provider...) is never silently widened. */
export const QuotaCreateInput = z.strictObject({
  id: Name.optional().describe('policy id; a UUID is generated when absent'),
  namespace: Name.describe('namespace the policy applies to, or * for any'),
  tenant: Name.describe('tenant the policy applies to, or * for any (each tenant then counts separately)'),
  max_actions: QuotaMaxActions,
  window: QuotaWindowName,
  overage_behavior: QuotaOverage.default('block'),
  enabled: z.boolean().default(true),
  description: Description.optional(),
});
export type QuotaCreateInput = z.infer<typeof QuotaCreateInput>;

/** PUT /v1/quotas/{id}: a partial update; the scope (namespace, tenant) and id never change. */
export const QuotaUpdateInput = z.strictObject({
  max_actions: QuotaMaxActions.optional(),
  window: QuotaWindowName.optional(),
  overage_behavior: QuotaOverage.optional(),
  enabled: z.boolean().optional(),
  description: Description.nullable().optional().describe('null removes the description'),
});
export type QuotaUpdateInput = z.infer<typeof QuotaUpdateInput>;

export const QuotaPolicy = z.object({
  id: z.string(),
  namespace: z.string(),
  tenant: z.string(),
  max_actions: z.number().int(),
  window: QuotaWindowName,
  overage_behavior: QuotaOverage,
  enabled: z.boolean(),
  description: z.string().optional(),
  source: z.enum(['config', 'api']).describe('config policies are read-only through the API'),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
});
export type QuotaPolicy = z.infer<typeof QuotaPolicy>;

export const QuotaListQuery = z.object({
  namespace: z.string().optional().describe('only policies whose namespace is exactly this (* included literally)'),
  tenant: z.string().optional().describe('only policies whose tenant is exactly this'),
  ...pageQuery(),
});
export type QuotaListQuery = z.infer<typeof QuotaListQuery>;

export const QuotaList = z.object({
  quotas: z.array(QuotaPolicy),
  count: z.number().int().describe('policies matching the filter, before limit/offset'),
});

export const QuotaIdParams = z.object({ id: z.string().min(1).max(256) });

/** A wildcard policy counts each tenant (namespace) separately: name the one to read. */
export const QuotaUsageQuery = z.object({
  namespace: Name.optional().describe('required when the policy namespace is *'),
  tenant: Name.optional().describe('required when the policy tenant is *'),
});
export type QuotaUsageQuery = z.infer<typeof QuotaUsageQuery>;

export const QuotaUsage = z.object({
  id: z.string(),
  namespace: z.string(),
  tenant: z.string(),
  used: z.number().int(),
  limit: z.number().int(),
  remaining: z.number().int(),
  window: QuotaWindowName,
  resets_at: z.string().describe('end of the current window (RFC 3339, UTC)'),
  overage_behavior: QuotaOverage,
});
export type QuotaUsage = z.infer<typeof QuotaUsage>;
