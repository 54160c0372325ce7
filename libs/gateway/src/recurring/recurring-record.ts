import { errors, type RecurringAction, type RecurringCreateInput, type RecurringUpdateInput } from '@sluice/core';
import { parseSchedule, type CronSchedule } from './cron-schedule.js';
import { aliased, type RecurringScope } from './recurring-input.js';
import { upcoming, withNext } from './occurrence.js';

/** A record's fields with the optional ones possibly null (cleared) or undefined (unset). */
type Fields = Omit<RecurringAction, 'name' | 'dedup_key' | 'ends_at' | 'max_executions' | 'description' | 'labels'> & {
  name?: string | null | undefined;
  dedup_key?: string | null | undefined;
  ends_at?: string | null | undefined;
  max_executions?: number | null | undefined;
  description?: string | null | undefined;
  labels?: Record<string, string> | null | undefined;
};

/** The stored and returned form: fixed field order, unset optional settings omitted, empty labels omitted. */
function canonical(f: Fields): RecurringAction {
  return {
    id: f.id,
    namespace: f.namespace,
    tenant: f.tenant,
    ...(f.name != null ? { name: f.name } : {}),
    cron_expr: f.cron_expr,
    timezone: f.timezone,
    enabled: f.enabled,
    provider: f.provider,
    action_type: f.action_type,
    payload: f.payload,
    metadata: f.metadata,
    ...(f.dedup_key != null ? { dedup_key: f.dedup_key } : {}),
    next_execution: f.next_execution,
    last_executed_at: f.last_executed_at,
    ...(f.ends_at != null ? { ends_at: f.ends_at } : {}),
    ...(f.max_executions != null ? { max_executions: f.max_executions } : {}),
    execution_count: f.execution_count,
    ...(f.description != null ? { description: f.description } : {}),
    ...(f.labels && Object.keys(f.labels).length > 0 ? { labels: f.labels } : {}),
    created_at: f.created_at,
    updated_at: f.updated_at,
  };
}

export interface RecordContext {
  id: string;
  nowMs: number;
  allowSeconds: boolean;
}

/** A new, enabled record waiting for its first occurrence; 400 for a bad schedule or one that never fires. */
export function newRecord(input: RecurringCreateInput, scope: RecurringScope, ctx: RecordContext): RecurringAction {
  const cron = aliased(['cron_expr', 'cron_expression'], input.cron_expr, input.cron_expression);
  if (cron === undefined) throw errors.badRequest('cron_expr is required');
  const schedule = parseSchedule(cron, input.timezone ?? 'UTC', { allowSeconds: ctx.allowSeconds });
  const now = new Date(ctx.nowMs).toISOString();
  const record = canonical({
    id: ctx.id,
    ...scope,
    name: input.name,
    cron_expr: schedule.expr,
    timezone: schedule.timezone,
    enabled: true,
    provider: input.provider,
    action_type: input.action_type,
    payload: input.payload,
    metadata: input.metadata ?? {},
    dedup_key: input.dedup_key,
    next_execution: null,
    last_executed_at: null,
    ends_at: instant(aliased(['end_date', 'ends_at'], input.end_date, input.ends_at)),
    max_executions: input.max_executions,
    execution_count: 0,
    description: input.description,
    labels: input.labels,
    created_at: now,
    updated_at: now,
  });
  const first = upcoming(record, ctx.nowMs);
  if (first === null) throw errors.badRequest('the schedule has no execution before end_date');
  return withNext(record, first);
}

/** The schedule a patch asks for, validated before any write (400); undefined when it changes neither cron nor zone. */
export function patchedSchedule(
  patch: RecurringUpdateInput,
  allowSeconds: boolean,
  current: Pick<RecurringAction, 'cron_expr' | 'timezone'>,
): CronSchedule | undefined {
  const cron = aliased(['cron_expr', 'cron_expression'], patch.cron_expr, patch.cron_expression);
  if (cron === undefined && patch.timezone === undefined) return undefined;
  return parseSchedule(cron ?? current.cron_expr, patch.timezone ?? current.timezone, { allowSeconds });
}

/**
 * Applies a partial update. A change of timing (cron, zone, end date, limit) of an enabled
 * record recomputes its next execution from now; when none is left it is finished (disabled).
 */
export function applyPatch(stored: RecurringAction, patch: RecurringUpdateInput, schedule: CronSchedule | undefined, nowMs: number): RecurringAction {
  const endDate = aliased(['end_date', 'ends_at'], patch.end_date, patch.ends_at);
  const merged = canonical({
    ...stored,
    ...definedOnly({
      provider: patch.provider,
      action_type: patch.action_type,
      payload: patch.payload,
      metadata: patch.metadata,
      dedup_key: patch.dedup_key,
      name: patch.name,
      description: patch.description,
      labels: patch.labels,
      max_executions: patch.max_executions,
      ends_at: instant(endDate),
    }),
    ...(schedule ? { cron_expr: schedule.expr, timezone: schedule.timezone } : {}),
    updated_at: new Date(nowMs).toISOString(),
  });
  const retimed = schedule !== undefined || endDate !== undefined || patch.max_executions !== undefined;
  if (!retimed || !stored.enabled) return merged;
  return withNext(merged, upcoming(merged, nowMs));
}

/** RFC 3339 with any offset → the UTC form we store; null and undefined pass through. */
function instant(value: string | null | undefined): string | null | undefined {
  return value == null ? value : new Date(Date.parse(value)).toISOString();
}

/** Drops keys whose value is undefined (absent from the patch); null stays, meaning "clear". */
function definedOnly<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;
}
