import type { ASTNode, ParseResult } from '@marcbachmann/cel-js';
import { RuleEvaluationError } from '../errors.js';
import type { IssueList } from '../definition/issues.js';
import type { EvalInput, RuleAction } from '../types.js';
import { compileRe2 } from '../conditions/operators.js';
import { CelVerdict, MAX_EXPRESSION_LENGTH, RE2_FUNCTION, VERDICT_TYPE, celEnvironment } from './cel-environment.js';
import { celActivation } from './cel-values.js';
import { withCelBudget } from '../evaluation-limits.js';

export interface CompiledExpression {
  evaluate(input: EvalInput): RuleAction | null;
  /** The action kinds the expression can decide, e.g. "allow|suppress" or the rule action's type. */
  actionLabel: string;
}

/**
 * Parses and type-checks a CEL expression once. It must yield a verdict (`allow()`,
 * `suppress(reason)`) or a bool; a bool needs the rule's `action` (used when true).
 */
export function compileExpression(expression: string, action: RuleAction | null, path: string, issues: IssueList): CompiledExpression | null {
  if (expression.length > MAX_EXPRESSION_LENGTH) {
    issues.add(path, `expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
    return null;
  }
  let program: ParseResult;
  try {
    program = celEnvironment.parse(expression);
  } catch (err) {
    issues.add(path, `CEL syntax error: ${firstLine(err)}`);
    return null;
  }
  const checked = program.check();
  if (!checked.valid) {
    issues.add(path, `CEL type error: ${firstLine(checked.error)}`);
    return null;
  }
  const calls = inspectCalls(program.ast, path, issues);
  if (!calls) return null;

  const type = checked.type ?? 'dyn';
  if (type === VERDICT_TYPE && action) {
    issues.add(path, 'the expression decides with allow()/suppress(), so the rule must not have an action');
    return null;
  }
  if (type === 'bool' && !action) {
    issues.add(path, 'yields a bool, so the rule needs an action (used when it is true)');
    return null;
  }
  if (type === 'dyn' && !action && calls.verdicts.length === 0) {
    issues.add(path, 'can only yield a bool (it calls neither allow() nor suppress()), so the rule needs an action');
    return null;
  }
  if (type !== VERDICT_TYPE && type !== 'bool' && type !== 'dyn') {
    issues.add(path, `yields ${type}; expected a bool or allow()/suppress()`);
    return null;
  }
  const labels = [...calls.verdicts, ...(action ? [action.type] : [])];
  return { evaluate: expressionEvaluator(program, action), actionLabel: labels.join('|') };
}

function expressionEvaluator(program: ParseResult, action: RuleAction | null): (input: EvalInput) => RuleAction | null {
  return (input) => {
    let result: unknown;
    try {
      result = withCelBudget(() => program(celActivation(input)));
    } catch (err) {
      if (err instanceof RuleEvaluationError) throw err;
      throw new RuleEvaluationError(`CEL evaluation failed: ${firstLine(err)}`, { cause: err });
    }
    if (result instanceof CelVerdict) return result.action;
    if (result === false) return null;
    if (result === true) {
      if (action) return action;
      throw new RuleEvaluationError('the expression yielded true but the rule has no action');
    }
    throw new RuleEvaluationError(`the expression yielded ${describeCelValue(result)}; expected a bool or allow()/suppress()`);
  };
}

/**
 * Walks the AST: refuses `matches` (backtracking regex in cel-js; `re2Matches` is the safe
 * equivalent), validates literal re2Matches patterns now, and notes which verdicts can occur.
 */
function inspectCalls(root: ASTNode, path: string, issues: IssueList): { verdicts: string[] } | null {
  const verdicts = new Set<string>();
  let ok = true;
  const visit = (node: ASTNode): void => {
    if (node.op === 'call' || node.op === 'rcall') {
      const name = node.args[0];
      const args = node.op === 'call' ? node.args[1] : node.args[2];
      if (name === 'allow' || name === 'suppress') verdicts.add(name);
      if (name === 'matches') {
        issues.add(path, `matches() is not available in expressions (it would backtrack); use text.${RE2_FUNCTION}(pattern) (RE2, unanchored)`);
        ok = false;
      }
      // cel.bind names a value once and reuses it: nested, it doubles a list per level for no
      // iteration the budget could count (30 levels: a billion elements).
      if (name === 'bind') {
        issues.add(path, 'cel.bind() is not available in expressions (nested, it builds values exponentially)');
        ok = false;
      }
      const pattern = args[0];
      if (name === RE2_FUNCTION && pattern?.op === 'value' && typeof pattern.args === 'string') {
        const compiled = compileRe2(pattern.args);
        if (!compiled.ok) {
          issues.add(path, compiled.message);
          ok = false;
        }
      }
    }
    forEachChild(node, visit);
  };
  visit(root);
  return ok ? { verdicts: ['allow', 'suppress'].filter((v) => verdicts.has(v)) } : null;
}

function forEachChild(node: ASTNode, visit: (child: ASTNode) => void): void {
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) for (const v of value) walk(v);
    else if (isAstNode(value)) visit(value);
  };
  if (node.op !== 'value' && node.op !== 'id') walk(node.args);
}

function isAstNode(value: unknown): value is ASTNode {
  return typeof value === 'object' && value !== null && 'op' in value && 'args' in value;
}

/** The error's first line, capped: it reaches logs and callers, and an engine's message may quote a value. */
function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const line = message.split('\n')[0] ?? message;
  return line.length > MAX_ERROR_LINE ? `${line.slice(0, MAX_ERROR_LINE)}…` : line;
}

const MAX_ERROR_LINE = 200;

/** The type of what an expression yielded, never the value: it comes from the payload (a card number) and is logged. */
function describeCelValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'bigint') return 'an int';
  if (typeof value === 'number') return 'a double';
  if (typeof value === 'string') return `a string (${value.length} characters)`;
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a map' : typeof value;
}
