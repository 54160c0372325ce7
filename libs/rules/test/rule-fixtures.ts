/** Builders shared by the rule-engine unit tests (kept out of src so they never ship). */
import { RuleDefinitionError, type RuleDefinitionIssue } from '../src/errors.js';
import { compileRuleDefinition } from '../src/definition/compile-rule.js';
import type { CompileEnv, CompiledRule, EvalInput, RuleActionView, RuleSource } from '../src/types.js';

export const NO_RUNTIMES: CompileEnv = { wasmRuntime: false, embeddingProvider: false };

export interface InputParts {
  action?: Partial<RuleActionView>;
  payload?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  state?: Record<string, unknown>;
}

export function makeInput(parts: InputParts = {}): EvalInput {
  return {
    action: {
      namespace: 'billing',
      tenant: 'acme',
      provider: 'email',
      action_type: 'send_invoice',
      payload: parts.payload ?? {},
      metadata: parts.metadata ?? {},
      ...parts.action,
    },
    state: parts.state ?? {},
    now: Date.UTC(2024, 0, 15, 14, 30, 45),
  };
}

/** Compiles an API rule with the given condition and a suppress action. */
export function ruleWithCondition(condition: unknown, name = 'r'): CompiledRule {
  return compileRuleDefinition({ name, condition, action: { type: 'suppress', reason: 'test' } }, { kind: 'api' }, NO_RUNTIMES);
}

/** Does `condition` match the input? */
export function conditionMatches(condition: unknown, parts: InputParts): boolean {
  return ruleWithCondition(condition).evaluate(makeInput(parts)) !== null;
}

/** The issues a definition is rejected with (fails the test when it compiles). */
export function issuesOf(definition: unknown, source: RuleSource = { kind: 'api' }, env: CompileEnv = NO_RUNTIMES): RuleDefinitionIssue[] {
  try {
    compileRuleDefinition(definition, source, env);
  } catch (err) {
    if (err instanceof RuleDefinitionError) return err.details;
    throw err;
  }
  throw new Error('expected the definition to be rejected');
}

/** The issues of a rule whose condition is `condition` (action valid). */
export function conditionIssues(condition: unknown, env: CompileEnv = NO_RUNTIMES): RuleDefinitionIssue[] {
  return issuesOf({ name: 'r', condition, action: { type: 'allow' } }, { kind: 'api' }, env);
}
