import { z } from 'zod';
import { ActionMetadata } from './action.js';

/** One entry of GET /v1/rules. */
const RuleSummary = z.object({
  name: z.string(),
  priority: z.number().int(),
  enabled: z.boolean(),
  description: z.string().nullable(),
  source: z.string().describe('yaml:<file>, cel:<file> or api'),
  action: z.string().describe('the rule action type'),
});
export const RuleList = z.object({ rules: z.array(RuleSummary) });

export const RuleDetail = RuleSummary.extend({
  definition: z.record(z.string(), z.unknown()).describe('the rule as written (YAML/JSON form)'),
});

export const RuleEnabledInput = z.object({ enabled: z.boolean() });
export const RuleEnabledResult = z.object({ name: z.string(), enabled: z.boolean() });

export const RuleReloadResult = z.object({
  loaded: z.number().int().describe('rules now loaded (files and API)'),
  errors: z.array(z.object({ file: z.string(), rule: z.string().optional(), message: z.string() })),
});

const Name = z.string().min(1).max(256);

/** POST /v1/rules/evaluate (the playground). */
export const PlaygroundInput = z.object({
  namespace: Name,
  tenant: Name,
  provider: Name,
  action_type: Name,
  payload: z.record(z.string(), z.unknown()),
  metadata: ActionMetadata.optional(),
  include_disabled: z.boolean().default(false).describe('list disabled rules in the trace as skipped'),
  evaluate_all: z.boolean().default(false).describe('evaluate every rule after the first match'),
  evaluate_at: z.iso.datetime({ offset: true }).optional().describe('clock override'),
  mock_state: z.record(z.string(), z.unknown()).optional().describe('state overrides, e.g. {"current": "open"}'),
});
export type PlaygroundInput = z.infer<typeof PlaygroundInput>;

const TraceEntrySchema = z.object({
  rule_name: z.string(),
  priority: z.number().int(),
  enabled: z.boolean(),
  condition_display: z.string(),
  result: z.enum(['matched', 'not_matched', 'skipped', 'error']),
  evaluation_duration_us: z.number().int(),
  action: z.string(),
  source: z.string(),
  description: z.string().nullable(),
  skip_reason: z.string().nullable(),
  error: z.string().nullable(),
});

export const PlaygroundResult = z.object({
  verdict: z.string().describe('allow, suppress, deduplicate, throttle, reroute, modify, ... or error'),
  matched_rule: z.string().nullable(),
  has_errors: z.boolean(),
  total_rules_evaluated: z.number().int(),
  total_rules_skipped: z.number().int(),
  evaluation_duration_us: z.number().int(),
  trace: z.array(TraceEntrySchema),
  context: z.object({
    time: z.record(z.string(), z.union([z.number(), z.string()])),
    environment_keys: z.array(z.string()),
    timezone: z.string(),
  }),
  modified_payload: z.record(z.string(), z.unknown()).nullable(),
  muted_by: z
    .object({ silence_id: z.string().optional(), interval: z.string().optional(), reason: z.enum(['mute_time_interval', 'active_time_interval']).optional() })
    .nullable()
    .describe('what would suppress the action after the rules at evaluate_at: an active silence, or the matched rule’s time interval; null when nothing'),
  unknown_intervals: z
    .array(z.object({ rule: z.string(), field: z.enum(['mute_time_intervals', 'active_time_intervals']), interval: z.string() }))
    .describe('interval names rules give that no interval defines for this namespace and tenant (mute: ignored; active: counted as outside)'),
});
export type PlaygroundResult = z.infer<typeof PlaygroundResult>;
