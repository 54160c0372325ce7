/** Why a `wasm_plugin` condition cannot run here (the plugin is not loaded, or lacks the function), or null. */
export type PluginCheck = (plugin: string, fn: string) => string | null;

/**
 * The `wasm_plugin` conditions of a rule definition that cannot run, each with its path. Such a
 * condition evaluates to the safe default, false, at every dispatch: a guardrail that would have
 * matched silently lets actions through, so the rule is reported (and refused through the API).
 */
export function pluginProblems(definition: unknown, check: PluginCheck): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  const visit = (node: unknown, path: string): void => {
    if (Array.isArray(node)) {
      for (const [i, child] of node.entries()) visit(child, `${path}.${i}`);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const { wasm_plugin, wasm_function } = node as { wasm_plugin?: unknown; wasm_function?: unknown };
    if (typeof wasm_plugin === 'string') {
      const problem = check(wasm_plugin, typeof wasm_function === 'string' ? wasm_function : 'evaluate');
      if (problem) problems.push({ path: `${path}.wasm_plugin`, message: problem });
      return;
    }
    for (const [key, child] of Object.entries(node)) visit(child, `${path}.${key}`);
  };
  visit((definition as { condition?: unknown } | null)?.condition, 'condition');
  return problems;
}
