import { formatRuleSource } from '../source-label.js';
import type { CompiledRule, Decision, EvalInput, TraceEntry, TraceOptions, TraceOutcome } from '../types.js';

/** The synthetic last trace line when no rule matched (the implicit allow). */
export const FALLTHROUGH_ENTRY: Readonly<TraceEntry> = Object.freeze({
  rule_name: '(default fallthrough)',
  priority: 2147483647,
  enabled: true,
  condition_display: 'no rules matched',
  result: 'matched',
  evaluation_duration_us: 0,
  action: 'allow',
  source: 'system',
  description: null,
  skip_reason: null,
  error: null,
});

/**
 * Evaluates `rules` (already in evaluation order) recording one trace entry per rule. Disabled rules
 * appear only with includeDisabled (skipped, "disabled"); after the first match the rest are
 * skipped ("earlier_rule_matched") unless evaluateAll, which evaluates them too while the decision
 * stays the first match. An erroring rule counts as not matching, as in dispatch.
 */
export function traceRules(rules: readonly CompiledRule[], input: EvalInput, opts: TraceOptions): TraceOutcome {
  const trace: TraceEntry[] = [];
  let decision: Decision | null = null;
  let erroredBeforeMatch = false;
  let hasErrors = false;
  let evaluated = 0;
  let skipped = 0;

  for (const rule of rules) {
    const enabled = opts.isEnabled(rule);
    const entry = (result: TraceEntry['result'], more: Partial<TraceEntry> = {}): TraceEntry => ({
      rule_name: rule.name,
      priority: rule.priority,
      enabled,
      condition_display: rule.conditionDisplay,
      result,
      evaluation_duration_us: 0,
      action: rule.actionLabel,
      source: formatRuleSource(rule.source),
      description: rule.description,
      skip_reason: null,
      error: null,
      ...more,
    });
    if (!enabled || (decision && !opts.evaluateAll)) {
      if (!enabled && !opts.includeDisabled) continue;
      skipped++;
      trace.push(entry('skipped', { skip_reason: enabled ? 'earlier_rule_matched' : 'disabled' }));
      continue;
    }
    evaluated++;
    const started = process.hrtime.bigint();
    try {
      const action = rule.evaluate(input);
      const duration = elapsedMicros(started);
      if (action) decision ??= { rule, action };
      // A matched entry names the action actually decided (an expression rule can yield several kinds).
      trace.push(
        action ? entry('matched', { evaluation_duration_us: duration, action: action.type }) : entry('not_matched', { evaluation_duration_us: duration }),
      );
    } catch (err) {
      const duration = elapsedMicros(started);
      hasErrors = true;
      if (!decision) erroredBeforeMatch = true;
      trace.push(entry('error', { evaluation_duration_us: duration, error: err instanceof Error ? err.message : String(err) }));
    }
  }
  if (!decision) trace.push({ ...FALLTHROUGH_ENTRY });
  return { decision, erroredBeforeMatch, hasErrors, evaluated, skipped, trace };
}

function elapsedMicros(started: bigint): number {
  return Number((process.hrtime.bigint() - started) / 1000n);
}
