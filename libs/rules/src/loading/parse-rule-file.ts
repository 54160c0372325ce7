import { YAMLParseError, parse as parseYaml } from 'yaml';
import { compileRuleDefinition } from '../definition/compile-rule.js';
import { RuleDefinitionError, formatIssues } from '../errors.js';
import { isPlainObject } from '../json-values.js';
import type { CompileEnv, CompiledRule, RuleLoadError } from '../types.js';

export interface RuleFileResult {
  rules: CompiledRule[];
  errors: RuleLoadError[];
}

/** `.cel` files hold expression rules; `.yaml`/`.yml` files hold condition rules. */
export function ruleFileKind(file: string): 'yaml' | 'cel' | null {
  const lower = file.toLowerCase();
  if (lower.endsWith('.cel')) return 'cel';
  if (lower.endsWith('.yaml') || lower.endsWith('.yml')) return 'yaml';
  return null;
}

/**
 * Parses one rule file (`rules: [...]`). A YAML syntax error or a wrong top-level shape rejects the
 * file; a bad rule is reported (file, rule, reason) and skipped while the others still load. A
 * name repeated within the file is an error for the later entry. `file` labels sources and errors.
 */
export function parseRuleFile(text: string, file: string, env: CompileEnv): RuleFileResult {
  const kind = ruleFileKind(file) ?? 'yaml';
  const fileError = (message: string): RuleFileResult => ({ rules: [], errors: [{ file, message }] });
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (err) {
    const reason = err instanceof YAMLParseError ? err.message.split('\n')[0] : String(err);
    return fileError(`YAML syntax error: ${reason}`);
  }
  if (document === null || document === undefined) return { rules: [], errors: [] }; // an empty file
  if (!isPlainObject(document)) return fileError('the file must be a mapping with a "rules" list');
  const result: RuleFileResult = { rules: [], errors: [] };
  for (const key of Object.keys(document)) {
    if (key !== 'rules') result.errors.push({ file, message: `unknown top-level key "${key}" (ignored; expected only "rules")` });
  }
  const entries = document['rules'] ?? [];
  if (!Array.isArray(entries)) return fileError('"rules" must be a list');

  const seen = new Set<string>();
  for (const [index, entry] of entries.entries()) {
    const name = isPlainObject(entry) && typeof entry['name'] === 'string' ? entry['name'] : undefined;
    const reject = (message: string) => result.errors.push({ file, ...(name !== undefined ? { rule: name } : {}), message });
    let rule: CompiledRule;
    try {
      rule = compileRuleDefinition(entry, { kind, file }, env);
    } catch (err) {
      if (!(err instanceof RuleDefinitionError)) throw err;
      reject(`rules[${index}]: ${formatIssues(err.details)}`);
      continue;
    }
    if (seen.has(rule.name)) {
      reject(`duplicate rule name "${rule.name}" (an earlier entry in this file has it)`);
      continue;
    }
    seen.add(rule.name);
    result.rules.push(rule);
  }
  return result;
}
