import { z } from 'zod';
import { RuleEvaluationError } from '../errors.js';
import type { CompiledCondition, ConditionContext, ConditionTest } from './compiled-condition.js';

const WasmConditionSchema = z.strictObject({
  wasm_plugin: z.string().min(1).max(256),
  wasm_function: z.string().min(1).max(256).default('evaluate'),
});

const SemanticConditionSchema = z.strictObject({
  semantic_match: z.string().min(1).max(4096),
  threshold: z.number().min(0).max(1).default(0.8),
  text_field: z.string().min(1).max(512).optional(),
});

/**
 * `wasm_plugin` / `semantic_match` conditions: the shape is validated now; a rule using one loads
 * only when the matching runtime is configured (CompileEnv), and says so otherwise.
 */
export function compileWasmCondition(raw: Record<string, unknown>, path: string, ctx: ConditionContext): CompiledCondition | null {
  const parsed = WasmConditionSchema.safeParse(raw);
  if (!parsed.success) {
    ctx.issues.addZod(path, parsed.error.issues);
    return null;
  }
  if (!ctx.env.wasmRuntime) {
    ctx.issues.add(path, `wasm_plugin "${parsed.data.wasm_plugin}" cannot be used: the WASM plugin runtime is not configured`);
    return null;
  }
  const { wasm_plugin, wasm_function } = parsed.data;
  return {
    test: unavailable('WASM plugin'),
    display: `wasm_plugin(${wasm_plugin}.${wasm_function})`,
    definition: { wasm_plugin, wasm_function },
  };
}

export function compileSemanticCondition(raw: Record<string, unknown>, path: string, ctx: ConditionContext): CompiledCondition | null {
  const parsed = SemanticConditionSchema.safeParse(raw);
  if (!parsed.success) {
    ctx.issues.addZod(path, parsed.error.issues);
    return null;
  }
  if (!ctx.env.embeddingProvider) {
    ctx.issues.add(path, 'semantic_match cannot be used: the embedding provider is not configured');
    return null;
  }
  const { semantic_match, threshold, text_field } = parsed.data;
  return {
    test: unavailable('semantic matching'),
    display: `semantic_match(${JSON.stringify(semantic_match)}, threshold=${threshold}${text_field ? `, text_field=${text_field}` : ''})`,
    definition: { semantic_match, threshold, ...(text_field !== undefined ? { text_field } : {}) },
  };
}

/**
 * Neither runtime exists in this build; the flags are never true today. Should one be switched on
 * before its evaluator lands, the rule errors visibly instead of silently (not) matching.
 */
function unavailable(feature: string): ConditionTest {
  return () => {
    throw new RuleEvaluationError(`${feature} evaluation is not available in this build`);
  };
}
