import { isPlainObject } from '../json-values.js';
import { describeValue, joinPath } from '../definition/issues.js';
import type { CompiledCondition, ConditionContext, ConditionTest } from './compiled-condition.js';
import { compileFieldTest } from './compile-field-test.js';
import { compileSemanticCondition, compileWasmCondition } from './compile-runtime-condition.js';

/** How many `all`/`any` levels may nest (the reference implementation's limit). */
const MAX_CONDITION_DEPTH = 16;

const FORM_KEYS = ['field', 'all', 'any', 'wasm_plugin', 'semantic_match'] as const;

/**
 * Validates and compiles a condition tree. Problems are added to `ctx.issues` (all of them, with
 * their path); the result is null when anything was wrong.
 */
export function compileCondition(raw: unknown, path: string, ctx: ConditionContext): CompiledCondition | null {
  return compileAt(raw, path, 0, ctx);
}

function compileAt(raw: unknown, path: string, depth: number, ctx: ConditionContext): CompiledCondition | null {
  if (!isPlainObject(raw)) {
    ctx.issues.add(path, `a condition must be a mapping (field test, all, any, wasm_plugin or semantic_match), got ${describeValue(raw)}`);
    return null;
  }
  const forms = FORM_KEYS.filter((k) => Object.hasOwn(raw, k));
  if (forms.length !== 1) {
    const found = forms.length === 0 ? `keys ${Object.keys(raw).join(', ') || '(none)'}` : forms.join(' and ');
    ctx.issues.add(path, `a condition needs exactly one of ${FORM_KEYS.join(', ')}; found ${found}`);
    return null;
  }
  switch (forms[0]) {
    case 'all':
      return compileCombinator('all', raw, path, depth + 1, ctx);
    case 'any':
      return compileCombinator('any', raw, path, depth + 1, ctx);
    case 'wasm_plugin':
      return compileWasmCondition(raw, path, ctx);
    case 'semantic_match':
      return compileSemanticCondition(raw, path, ctx);
    default:
      return compileFieldTest(raw, path, ctx);
  }
}

function compileCombinator(kind: 'all' | 'any', raw: Record<string, unknown>, path: string, depth: number, ctx: ConditionContext): CompiledCondition | null {
  const at = joinPath(path, kind);
  if (depth > MAX_CONDITION_DEPTH) {
    ctx.issues.add(at, `conditions nest deeper than ${MAX_CONDITION_DEPTH} all/any levels`);
    return null;
  }
  for (const key of Object.keys(raw)) if (key !== kind) ctx.issues.add(joinPath(path, key), `unknown key "${key}" beside ${kind}`);
  const items = raw[kind];
  if (!Array.isArray(items) || items.length === 0) {
    ctx.issues.add(at, `${kind} needs a non-empty list of conditions, got ${describeValue(items)}`);
    return null;
  }
  // Compile every child (not just until the first failure) so all problems are reported.
  const children = items.map((item, i) => compileAt(item, joinPath(at, i), depth, ctx));
  if (children.some((c) => c === null) || Object.keys(raw).length !== 1) return null;
  const compiled = children as CompiledCondition[];
  const tests = compiled.map((c) => c.test);
  const joiner = kind === 'all' ? ' AND ' : ' OR ';
  return {
    test: kind === 'all' ? allOf(tests) : anyOf(tests),
    display: compiled.length === 1 ? compiled[0]!.display : `(${compiled.map((c) => c.display).join(joiner)})`,
    definition: { [kind]: compiled.map((c) => c.definition) },
  };
}

function allOf(tests: readonly ConditionTest[]): ConditionTest {
  return (input) => {
    for (let i = 0; i < tests.length; i++) if (!tests[i]!(input)) return false;
    return true;
  };
}

function anyOf(tests: readonly ConditionTest[]): ConditionTest {
  return (input) => {
    for (let i = 0; i < tests.length; i++) if (tests[i]!(input)) return true;
    return false;
  };
}
