import { z } from 'zod';
import { pageQuery } from './paging.js';
import { MAX_RECURRING_EXECUTIONS, boundedCount } from './bounds.js';
import { boundedName } from './names.js';
import { ActionMetadata, Labels } from './action.js';

/** A namespace, tenant or routing name: non-empty, bounded, free of control characters. */
const Name = boundedName();

const CronText = z.string().min(1).max(256);
const TimeZone = z.string().min(1).max(128);
const Timestamp = z.iso.datetime({ offset: true });
const Description = z.string().max(1024);
const RecurringName = z.string().min(1).max(256);
const MaxExecutions = boundedCount(MAX_RECURRING_EXECUTIONS);
const Payload = z.record(z.string(), z.unknown()).describe('arbitrary JSON object');

/** `namespace` and `tenant` of a recurring-action route: in the query (spec) or the JSON body (reference SDKs). */
export const RecurringScopeQuery = z.object({
  namespace: Name.optional().describe('required here or in the body'),
  tenant: Name.optional().describe('required here or in the body'),
});
export type RecurringScopeQuery = z.infer<typeof RecurringScopeQuery>;

/** GET one and DELETE carry the scope in the query only. */
export const RecurringRequiredScopeQuery = z.object({ namespace: Name, tenant: Name });
export type RecurringRequiredScopeQuery = z.infer<typeof RecurringRequiredScopeQuery>;

/** POST /v1/recurring/{id}/pause and /resume: an optional body naming the scope (reference SDK form). */
export const RecurringScopeBody = z.strictObject({ namespace: Name.optional(), tenant: Name.optional() });
export type RecurringScopeBody = z.infer<typeof RecurringScopeBody>;

/**
 * POST /v1/recurring. The spec's names, with the reference SDKs' spellings accepted as aliases
 * (`cron_expression` for `cron_expr`, `ends_at` for `end_date`). Which of each pair is required,
 * and that the scope is named once, is checked by the gateway (JSON Schema cannot say "one of").
 * Unknown keys are refused so a misspelt limit is an error, not an endless schedule.
 */
export const RecurringCreateInput = z.strictObject({
  namespace: Name.optional().describe('required here or in the query'),
  tenant: Name.optional().describe('required here or in the query'),
  cron_expr: CronText.optional().describe('5-field cron: minute hour day-of-month month day-of-week (required, or cron_expression)'),
  cron_expression: CronText.optional().describe('alias of cron_expr'),
  timezone: TimeZone.optional().describe('IANA time zone the cron is read in; default UTC'),
  provider: Name.describe('provider of the dispatched action'),
  action_type: Name.describe('action_type of the dispatched action'),
  payload: Payload,
  metadata: ActionMetadata.optional(),
  dedup_key: z.string().min(1).max(1024).nullable().optional(),
  name: RecurringName.nullable().optional(),
  description: Description.nullable().optional(),
  labels: Labels.nullable().optional(),
  end_date: Timestamp.nullable().optional().describe('no execution after this instant (RFC 3339)'),
  ends_at: Timestamp.nullable().optional().describe('alias of end_date'),
  max_executions: MaxExecutions.nullable().optional().describe('stop after this many executions'),
});
export type RecurringCreateInput = z.infer<typeof RecurringCreateInput>;

/** PUT /v1/recurring/{id}: partial; an absent field stays, null clears an optional one. */
export const RecurringUpdateInput = z.strictObject({
  namespace: Name.optional().describe('the scope, when not in the query'),
  tenant: Name.optional().describe('the scope, when not in the query'),
  cron_expr: CronText.optional(),
  cron_expression: CronText.optional().describe('alias of cron_expr'),
  timezone: TimeZone.optional(),
  provider: Name.optional(),
  action_type: Name.optional(),
  payload: Payload.optional(),
  metadata: ActionMetadata.optional(),
  dedup_key: z.string().min(1).max(1024).nullable().optional(),
  name: RecurringName.nullable().optional(),
  description: Description.nullable().optional(),
  labels: Labels.nullable().optional().describe('replaces all labels; null or {} removes them'),
  end_date: Timestamp.nullable().optional().describe('null removes the end date'),
  ends_at: Timestamp.nullable().optional().describe('alias of end_date'),
  max_executions: MaxExecutions.nullable().optional().describe('null removes the limit'),
});
export type RecurringUpdateInput = z.infer<typeof RecurringUpdateInput>;

/** The full record (GET one, PUT, pause, resume). Unset optional settings are omitted; run state is always present. */
export const RecurringAction = z.object({
  id: z.string(),
  namespace: z.string(),
  tenant: z.string(),
  name: z.string().optional(),
  cron_expr: z.string(),
  timezone: z.string(),
  enabled: z.boolean().describe('false when paused, or when end_date or max_executions ended it'),
  provider: z.string(),
  action_type: z.string(),
  payload: z.record(z.string(), z.unknown()),
  metadata: ActionMetadata,
  dedup_key: z.string().optional(),
  next_execution: z.string().nullable().describe('RFC 3339; null while paused or once finished'),
  last_executed_at: z.string().nullable().describe('RFC 3339; null before the first execution'),
  ends_at: z.string().optional().describe('RFC 3339 (set as end_date)'),
  max_executions: z.number().int().optional(),
  execution_count: z.number().int(),
  description: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional().describe('omitted when empty'),
  created_at: z.string(),
  updated_at: z.string(),
});
export type RecurringAction = z.infer<typeof RecurringAction>;

/** 201 of POST /v1/recurring (the spec's shape). */
export const RecurringCreated = z.object({
  recurring_id: z.string(),
  next_execution: z.string().describe('RFC 3339'),
  cron_expr: z.string(),
  timezone: z.string(),
  enabled: z.boolean(),
});
export type RecurringCreated = z.infer<typeof RecurringCreated>;

/** A list entry: the template (payload, metadata) and the limits are left to GET one. */
export const RecurringSummary = RecurringAction.pick({
  id: true,
  namespace: true,
  tenant: true,
  name: true,
  cron_expr: true,
  timezone: true,
  enabled: true,
  provider: true,
  action_type: true,
  next_execution: true,
  last_executed_at: true,
  execution_count: true,
  description: true,
  created_at: true,
});
export type RecurringSummary = z.infer<typeof RecurringSummary>;

export function toRecurringSummary(r: RecurringAction): RecurringSummary {
  return {
    id: r.id,
    namespace: r.namespace,
    tenant: r.tenant,
    ...(r.name !== undefined ? { name: r.name } : {}),
    cron_expr: r.cron_expr,
    timezone: r.timezone,
    enabled: r.enabled,
    provider: r.provider,
    action_type: r.action_type,
    next_execution: r.next_execution,
    last_executed_at: r.last_executed_at,
    execution_count: r.execution_count,
    ...(r.description !== undefined ? { description: r.description } : {}),
    created_at: r.created_at,
  };
}

export const RecurringListQuery = z.object({
  namespace: Name,
  tenant: Name,
  enabled: z.boolean().optional().describe('only enabled (true) or paused/finished (false) ones'),
  status: z.enum(['active', 'paused']).optional().describe('reference spelling of the enabled filter'),
  ...pageQuery(),
});
export type RecurringListQuery = z.infer<typeof RecurringListQuery>;

export const RecurringList = z.object({
  recurring_actions: z.array(RecurringSummary),
  count: z.number().int().describe('matching recurring actions before limit/offset'),
});
export type RecurringList = z.infer<typeof RecurringList>;

export const RecurringIdParams = z.object({ id: z.string().min(1).max(256) });
