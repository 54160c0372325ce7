import { compileExpression } from '../cel/compile-expression.js';
import { compileCondition } from '../conditions/compile-condition.js';
import { RuleDefinitionError } from '../errors.js';
import { deepFreeze, isPlainObject, type JsonObject } from '../json-values.js';
import type { CompileEnv, CompiledRule, EvalInput, RuleAction, RuleSource } from '../types.js';
import { compileAction } from './action-schema.js';
import { IssueList, describeValue } from './issues.js';
import { ConditionRuleSchema, ExpressionRuleSchema, type RuleBase } from './rule-schema.js';

const NO_INTERVALS: readonly string[] = Object.freeze([]);

/** What a rule's body compiles to, whichever front end it came from. */
interface CompiledBody {
  evaluate: (input: EvalInput) => RuleAction | null;
  conditionDisplay: string;
  actionLabel: string;
  body: JsonObject;
}

/**
 * Validates and compiles one rule definition: a YAML entry (`source.kind` "yaml": condition form),
 * a `.cel` entry ("cel": expression form) or an API body ("api": either, chosen by `expression`).
 * Throws RuleDefinitionError listing every problem with its path.
 */
export function compileRuleDefinition(def: unknown, source: RuleSource, env: CompileEnv): CompiledRule {
  if (!isPlainObject(def)) throw new RuleDefinitionError([{ path: '', message: `a rule must be a mapping, got ${describeValue(def)}` }]);
  const ruleName = typeof def['name'] === 'string' ? def['name'] : undefined;
  const issues = new IssueList();
  const useExpression = source.kind === 'cel' || (source.kind === 'api' && Object.hasOwn(def, 'expression'));
  if (source.kind === 'api' && useExpression && Object.hasOwn(def, 'condition')) {
    issues.add('', 'give either condition or expression, not both');
  }
  const parsed = (useExpression ? ExpressionRuleSchema : ConditionRuleSchema).safeParse(def);
  if (!parsed.success) issues.addZod('', parsed.error.issues);
  const body = useExpression ? compileExpressionBody(def, issues) : compileConditionBody(def, env, issues);
  if (!parsed.success || !body || !issues.isEmpty) throw new RuleDefinitionError(issues.items, ruleName);
  return buildRule(parsed.data, body, source);
}

function compileConditionBody(raw: JsonObject, env: CompileEnv, issues: IssueList): CompiledBody | null {
  if (raw['condition'] === undefined) issues.add('condition', 'required');
  if (raw['action'] === undefined) issues.add('action', 'required');
  const condition = raw['condition'] === undefined ? null : compileCondition(raw['condition'], 'condition', { env, issues, regexProgramSize: { total: 0 } });
  const action = raw['action'] === undefined ? null : compileAction(raw['action'], 'action', issues);
  if (!condition || !action) return null;
  const test = condition.test;
  const decided = deepFreeze(action);
  return {
    evaluate: (input) => (test(input) ? decided : null),
    conditionDisplay: condition.display,
    actionLabel: action.type,
    body: { condition: condition.definition, action: decided },
  };
}

function compileExpressionBody(raw: JsonObject, issues: IssueList): CompiledBody | null {
  const expression = raw['expression'];
  if (typeof expression !== 'string') return null; // the schema reports it
  const hasAction = raw['action'] !== undefined;
  const action = hasAction ? compileAction(raw['action'], 'action', issues) : null;
  if (hasAction && !action) return null;
  const decided = action ? deepFreeze(action) : null;
  const compiled = compileExpression(expression, decided, 'expression', issues);
  if (!compiled) return null;
  return {
    evaluate: compiled.evaluate,
    conditionDisplay: expression.trim(),
    actionLabel: compiled.actionLabel,
    body: { expression, ...(decided ? { action: decided } : {}) },
  };
}

function buildRule(base: RuleBase, body: CompiledBody, source: RuleSource): CompiledRule {
  const definition = deepFreeze({
    name: base.name,
    priority: base.priority,
    ...(base.description != null ? { description: base.description } : {}),
    enabled: base.enabled,
    ...body.body,
    ...(base.metadata ? { metadata: base.metadata } : {}),
    ...(base.mute_time_intervals ? { mute_time_intervals: base.mute_time_intervals } : {}),
    ...(base.active_time_intervals ? { active_time_intervals: base.active_time_intervals } : {}),
  });
  return Object.freeze({
    name: base.name,
    priority: base.priority,
    description: base.description ?? null,
    enabled: base.enabled,
    source: Object.freeze({ ...source }),
    conditionDisplay: body.conditionDisplay,
    actionLabel: body.actionLabel,
    muteTimeIntervals: base.mute_time_intervals ?? NO_INTERVALS,
    activeTimeIntervals: base.active_time_intervals ?? NO_INTERVALS,
    definition,
    evaluate: body.evaluate,
  });
}
