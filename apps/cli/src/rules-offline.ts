import { PlaygroundInput } from '@sluice/core';
import { playgroundEvalInput, playgroundVerdict } from '@sluice/gateway';
import { loadRuleDirectory, RuleSet, type CompileEnv } from '@sluice/rules';
import { type ParsedArgs, UsageError, stringValue } from './args.js';
import { readJsonFile } from './json-input.js';
import { print } from './remote/print.js';
import { type Output, outputOf } from './remote/remote-options.js';

/*
 * `sluice rules lint|test DIR`: the rule files alone, for CI pipelines — the loader and the
 * evaluator dispatch uses, without a gateway, a state store or the rest of the configuration.
 */

/** `rules lint DIR` or `rules test DIR --action FILE [--expect VERDICT] [--at TIME]`: the exit code. */
export async function runRulesCommand(command: 'rules lint' | 'rules test', args: ParsedArgs): Promise<number> {
  const output = outputOf(command, args.options);
  const dir = args.positionals[0] ?? '';
  if (command === 'rules lint') return rulesLint(output, dir);
  const option = (name: string) => stringValue(args.options, name);
  const action = option('action');
  if (action === undefined) throw new UsageError("'rules test' needs --action FILE; see sluice rules test --help");
  const [expect, at] = [option('expect'), option('at')];
  return rulesTest(output, dir, { action, ...(expect !== undefined ? { expect } : {}), ...(at !== undefined ? { at } : {}) });
}

/** Plugins and an embedding provider are taken to exist: their rules compile (a gateway without them refuses them at start-up). */
const OFFLINE_ENV: CompileEnv = { wasmRuntime: true, embeddingProvider: true };

/** Exit 0 when every file and rule loads, 1 otherwise (each problem listed). */
async function rulesLint(output: Output, dir: string): Promise<number> {
  const { rules, errors } = await loadRuleDirectory(dir, OFFLINE_ENV);
  const result = { rules: rules.map((r) => r.name), errors };
  print(output, result, () =>
    errors.length === 0 ? [[`${rules.length} rules, no problems`]] : [['FILE', 'RULE', 'PROBLEM'], ...errors.map((e) => [e.file, e.rule ?? '-', e.message])],
  );
  return errors.length === 0 ? 0 : 1;
}

/**
 * Evaluates one action as the playground does (first match decides, a trace of every rule);
 * exit 1 when the files do not load, or when `expect` names another verdict.
 */
async function rulesTest(output: Output, dir: string, opts: { action: string; expect?: string; at?: string }): Promise<number> {
  const { rules, errors } = await loadRuleDirectory(dir, OFFLINE_ENV);
  if (errors.length > 0) {
    process.stderr.write(`sluice: ${dir}: ${errors.length} rule problem(s), see sluice rules lint ${dir}\n`);
    return 1;
  }
  const input = readAction(opts.action);
  const at = opts.at ?? input.evaluate_at;
  const now = at === undefined ? Date.now() : Date.parse(at);
  if (Number.isNaN(now)) throw new UsageError(`--at must be an RFC 3339 time, got "${at}"`);
  const set = new RuleSet(rules);
  const outcome = set.trace(playgroundEvalInput(input, now), {
    includeDisabled: input.include_disabled,
    evaluateAll: input.evaluate_all,
    isEnabled: (rule) => rule.enabled,
  });
  const { verdict, matched_rule: matched } = playgroundVerdict(outcome);
  const result = { verdict, matched_rule: matched, has_errors: outcome.hasErrors, trace: outcome.trace };
  print(output, result, () => [
    ['RULE', 'PRIORITY', 'RESULT', 'ACTION', 'CONDITION'],
    ...outcome.trace.map((t) => [t.rule_name, String(t.priority), t.error ? `error: ${t.error}` : t.result, t.action, t.condition_display]),
    [],
    [`verdict: ${verdict}${matched ? ` (rule ${matched})` : ''}`],
  ]);
  if (opts.expect !== undefined && opts.expect !== verdict) {
    process.stderr.write(`sluice: expected verdict ${opts.expect}, got ${verdict}\n`);
    return 1;
  }
  return 0;
}

function readAction(file: string): PlaygroundInput {
  const parsed = PlaygroundInput.safeParse(readJsonFile(file, '--action'));
  if (!parsed.success) throw new UsageError(`--action ${file}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}`);
  return parsed.data;
}
