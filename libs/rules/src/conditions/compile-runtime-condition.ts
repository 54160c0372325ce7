import { z } from 'zod';
import { PluginCallNeeded, SimilarityNeeded } from '../errors.js';
import type { EvalInput } from '../types.js';
import { compileFieldPath } from './field-path.js';
import type { CompiledCondition, ConditionContext } from './compiled-condition.js';

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
    test: (input) => {
      const verdict = input.plugin?.(wasm_plugin, wasm_function);
      if (verdict === undefined) throw new PluginCallNeeded(wasm_plugin, wasm_function);
      return verdict;
    },
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
  const textOf = textReader(text_field);
  if (typeof textOf === 'string') {
    ctx.issues.add(`${path}.text_field`, textOf);
    return null;
  }
  return {
    test: (input) => {
      const text = textOf(input);
      const similarity = input.similarity?.(semantic_match, text);
      if (similarity === undefined) throw new SimilarityNeeded(semantic_match, text);
      return similarity >= threshold;
    },
    display: `semantic_match(${JSON.stringify(semantic_match)}, threshold=${threshold}${text_field ? `, text_field=${text_field}` : ''})`,
    definition: { semantic_match, threshold, ...(text_field !== undefined ? { text_field } : {}) },
  };
}

/**
 * What a semantic condition compares: the field at `text_field` (a field path, `action.` optional:
 * `payload.message`), a string as is and anything else as JSON; without one, the whole payload as
 * JSON. A path that does not compile is returned as its message.
 */
function textReader(textField: string | undefined): ((input: EvalInput) => string) | string {
  if (textField === undefined) return (input) => JSON.stringify(input.action.payload ?? {});
  const compiled = compileFieldPath(textField.startsWith('action.') || textField.startsWith('state.') ? textField : `action.${textField}`);
  if (!compiled.ok) return compiled.message;
  return (input) => {
    const value = compiled.read(input);
    return typeof value === 'string' ? value : JSON.stringify(value ?? null);
  };
}
