import { joinPath } from '../definition/issues.js';
import { MAX_VALUE_DEPTH, cloneJson, nestsDeeperThan } from '../json-values.js';
import type { CompiledCondition, ConditionContext } from './compiled-condition.js';
import { compileFieldPath } from './field-path.js';
import { OPERATORS, OPERATOR_SPELLINGS, compileOperator, type OperatorName } from './operators.js';
import { MAX_RULE_REGEX_PROGRAM_SIZE } from '../evaluation-limits.js';

/** `{field: <path>, <op>: <value>}` with exactly one operator (aliases count as their canonical name). */
export function compileFieldTest(raw: Record<string, unknown>, path: string, ctx: ConditionContext): CompiledCondition | null {
  const { issues } = ctx;
  const operators: { key: string; op: OperatorName }[] = [];
  for (const key of Object.keys(raw)) {
    if (key === 'field') continue;
    const op = Object.hasOwn(OPERATOR_SPELLINGS, key) ? OPERATOR_SPELLINGS[key] : undefined;
    if (op) operators.push({ key, op });
    else issues.add(joinPath(path, key), `unknown operator "${key}" (expected one of ${OPERATORS.join(', ')})`);
  }
  const field = raw['field'];
  if (typeof field !== 'string') {
    issues.add(joinPath(path, 'field'), 'field must be a path string such as action.payload.amount');
    return null;
  }
  const first = operators[0];
  if (operators.length !== 1 || first === undefined) {
    const found = operators.length === 0 ? 'none' : operators.map((o) => o.key).join(', ');
    issues.add(path, `a field test needs exactly one operator (${OPERATORS.join(', ')}); found ${found}`);
    return null;
  }
  const reader = compileFieldPath(field);
  if (!reader.ok) issues.add(joinPath(path, 'field'), reader.message);
  const rawOperand = raw[first.key];
  if (nestsDeeperThan(rawOperand, MAX_VALUE_DEPTH)) {
    issues.add(joinPath(path, first.key), `the value nests deeper than ${MAX_VALUE_DEPTH} levels`);
    return null;
  }
  // A private copy: the compiled test and the stored definition must not alias the caller's objects.
  const operand = cloneJson(rawOperand);
  const predicate = compileOperator(first.op, operand);
  if (!predicate.ok) issues.add(joinPath(path, first.key), predicate.message);
  if (!reader.ok || !predicate.ok) return null;
  if (predicate.regexProgramSize !== undefined) {
    ctx.regexProgramSize.total += predicate.regexProgramSize;
    if (ctx.regexProgramSize.total > MAX_RULE_REGEX_PROGRAM_SIZE) {
      issues.add(
        joinPath(path, first.key),
        `the rule's regular expressions compile to ${ctx.regexProgramSize.total} instructions in all, over the limit of ${MAX_RULE_REGEX_PROGRAM_SIZE}`,
      );
      return null;
    }
  }

  const read = reader.read;
  const test = predicate.test;
  return {
    test: (input) => test(read(input)),
    display: `${field} ${first.op} ${JSON.stringify(operand)}`,
    definition: { field, [first.op]: operand },
  };
}
