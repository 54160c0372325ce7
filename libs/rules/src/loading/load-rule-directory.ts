import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { compareCodeUnits } from '@sluice/core';
import type { CompileEnv, CompiledRule, RuleLoadError } from '../types.js';
import { parseRuleFile, ruleFileKind } from './parse-rule-file.js';

export interface RuleDirectoryResult {
  rules: CompiledRule[];
  errors: RuleLoadError[];
}

/**
 * Loads `*.yaml`, `*.yml` and `*.cel` files directly in `dir` (not recursive), in sorted file-name
 * order so results are reproducible. Problems are reported, never thrown: a bad rule skips that
 * rule, an unreadable or syntactically broken file skips that file, and a name already loaded
 * from an earlier file is an error for the later one. Files are labelled by their name.
 */
export async function loadRuleDirectory(dir: string, env: CompileEnv): Promise<RuleDirectoryResult> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => ruleFileKind(n) !== null).sort(compareCodeUnits);
  } catch (err) {
    return { rules: [], errors: [{ file: dir, message: `cannot read the rules directory: ${reason(err)}` }] };
  }
  const result: RuleDirectoryResult = { rules: [], errors: [] };
  const loadedFrom = new Map<string, string>();
  for (const name of names) {
    const path = join(dir, name);
    let text: string;
    try {
      if (!(await stat(path)).isFile()) continue; // e.g. a directory called rules.yaml
      text = await readFile(path, 'utf8');
    } catch (err) {
      result.errors.push({ file: name, message: `cannot read the file: ${reason(err)}` });
      continue;
    }
    const parsed = parseRuleFile(text, name, env);
    result.errors.push(...parsed.errors);
    for (const rule of parsed.rules) {
      const earlier = loadedFrom.get(rule.name);
      if (earlier !== undefined) {
        result.errors.push({ file: name, rule: rule.name, message: `duplicate rule name "${rule.name}" (already loaded from ${earlier})` });
        continue;
      }
      loadedFrom.set(rule.name, name);
      result.rules.push(rule);
    }
  }
  return result;
}

function reason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
