import type { CompiledRule, Decision, EvalInput, TraceOptions, TraceOutcome } from '../types.js';
import { traceRules } from './trace-rules.js';

/** Evaluation order: ascending priority, then name (names are unique, so the order is total). */
function compareRules(a: CompiledRule, b: CompiledRule): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * An immutable, ordered set of compiled rules. Build a new one to change the rules (the gateway
 * swaps whole sets, so a dispatch never sees a half-applied reload).
 */
export class RuleSet {
  private readonly ordered: readonly CompiledRule[];
  private readonly byName: ReadonlyMap<string, CompiledRule>;

  constructor(rules: readonly CompiledRule[]) {
    const byName = new Map<string, CompiledRule>();
    for (const rule of rules) {
      if (byName.has(rule.name)) throw new Error(`RuleSet: duplicate rule name "${rule.name}"`);
      byName.set(rule.name, rule);
    }
    this.ordered = Object.freeze([...rules].sort(compareRules));
    this.byName = byName;
  }

  /** All rules in evaluation order. */
  list(): readonly CompiledRule[] {
    return this.ordered;
  }

  get(name: string): CompiledRule | undefined {
    return this.byName.get(name);
  }

  get size(): number {
    return this.ordered.length;
  }

  /**
   * The dispatch fast path: the first enabled rule that matches decides; null means no rule
   * matched (allow). A rule whose evaluation throws is reported to `onError` and skipped.
   */
  evaluate(input: EvalInput, isEnabled: (rule: CompiledRule) => boolean, onError?: (rule: CompiledRule, err: unknown) => void): Decision | null {
    const rules = this.ordered;
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i]!;
      if (!isEnabled(rule)) continue;
      try {
        const action = rule.evaluate(input);
        if (action) return { rule, action };
      } catch (err) {
        onError?.(rule, err);
      }
    }
    return null;
  }

  /** The playground: evaluates with a per-rule trace (see traceRules). */
  trace(input: EvalInput, opts: TraceOptions): TraceOutcome {
    return traceRules(this.ordered, input, opts);
  }
}
