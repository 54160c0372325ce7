import { boundedName } from '@sluice/core';
import { z } from 'zod';

const I32_MIN = -2147483648;
const I32_MAX = 2147483647;

// The rule every name takes: a rule is managed at /v1/rules/{name}, so `..` or a bidirectional
// control would make one no browser can reach or no log shows as it is.
const RuleName = boundedName(256);

const IntervalNames = z.array(z.string().min(1).max(256));

/** Fields every rule entry may carry, whatever its condition form. */
const RULE_BASE = {
  name: RuleName,
  priority: z.number().int().min(I32_MIN).max(I32_MAX).default(0),
  description: z.string().max(4096).nullable().optional(),
  enabled: z.boolean().default(true),
  metadata: z.record(z.string(), z.string()).optional(),
  mute_time_intervals: IntervalNames.optional(),
  active_time_intervals: IntervalNames.optional(),
};

/**
 * A condition rule (YAML entry, API body). `condition` and `action` are validated by their own
 * compilers (recursive forms, aliases), so here they are only carried through.
 */
export const ConditionRuleSchema = z.strictObject({
  ...RULE_BASE,
  // Presence is checked by the rule compiler, which words "required" better than zod's "nonoptional".
  condition: z.unknown().optional(),
  action: z.unknown().optional(),
});

/** An expression rule (`.cel` entry, API body with `expression`). */
export const ExpressionRuleSchema = z.strictObject({
  ...RULE_BASE,
  expression: z.string().min(1),
  action: z.unknown().optional(),
});

export type RuleBase = Omit<z.infer<typeof ConditionRuleSchema>, 'condition' | 'action'>;
