import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { shellBlockLines, splitCommand } from './shell-words.js';

/**
 * One curl example of a doc's ```sh blocks: `curl -s [-X M] [-H 'k: v'] [-d 'json'] [-o /dev/null
 * -w '%{http_code}\n'] localhost:8080/path`, optionally captured as `VAR=$(curl … | jq -r .field)`,
 * and the `# → …` line after it: a JSON object the response must contain, or the status code.
 */
export interface CurlExample {
  line: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** `-w '%{http_code}'`: the output is the status, not the body. */
  statusOnly: boolean;
  capture: { variable: string; field: string } | undefined;
  expected: string | undefined;
}

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

const CAPTURE = /^(\w+)=\$\((.*)\|\s*jq -r \.(\w+)\)$/;

function parseCurl(line: string, expected: string | undefined): CurlExample {
  const captured = CAPTURE.exec(line);
  const command = captured ? (captured[2] ?? '').trim() : line;
  const words = splitCommand(command);
  if (words[0] !== 'curl') throw new Error(`not a curl example: ${line}`);
  const example: CurlExample = { line, method: 'GET', path: '', headers: {}, body: undefined, statusOnly: false, expected, capture: undefined };
  if (captured) example.capture = { variable: captured[1] ?? '', field: captured[3] ?? '' };
  let method: string | undefined;
  for (let i = 1; i < words.length; i++) {
    const word = words[i] ?? '';
    const next = () => words[++i] ?? '';
    if (word === '-s') continue;
    else if (word === '-X') method = next();
    else if (word === '-H') {
      const [name, ...value] = next().split(':');
      example.headers[(name ?? '').trim().toLowerCase()] = value.join(':').trim();
    } else if (word === '-d') example.body = next();
    else if (word === '-o') next();
    else if (word === '-w') example.statusOnly = next().includes('%{http_code}');
    else if (word.startsWith('localhost:8080/')) example.path = word.slice('localhost:8080'.length);
    else throw new Error(`unsupported curl word ${word} in: ${line}`);
  }
  example.method = method ?? (example.body === undefined ? 'GET' : 'POST');
  return example;
}

/** The curl examples of every ```sh block of a markdown text, in order. */
export function curlExamples(markdown: string): CurlExample[] {
  const lines = shellBlockLines(markdown);
  const examples: CurlExample[] = [];
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const after = lines[i + 1]?.trim() ?? '';
    examples.push(parseCurl(line, after.startsWith('# →') ? after.slice('# →'.length).trim() : undefined));
  });
  return examples;
}

/** `$NAME` replaced by the captured value. */
function substitute(text: string, vars: ReadonlyMap<string, string>): string {
  return text.replace(/\$(\w+)/g, (whole, name: string) => vars.get(name) ?? whole);
}

/** Runs one example against `baseUrl`; returns what curl would have printed, and the status. */
async function runCurl(baseUrl: string, example: CurlExample, vars: ReadonlyMap<string, string>): Promise<{ status: number; output: string }> {
  const body = example.body === undefined ? undefined : substitute(example.body, vars);
  const res = await fetch(`${baseUrl}${substitute(example.path, vars)}`, {
    method: example.method,
    headers: example.headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await res.text();
  return { status: res.status, output: example.statusOnly ? String(res.status) : text };
}

/** A fenced block's bodies of one language (```yaml, ```json…), in order. */
export function fencedBlocks(markdown: string, lang: string): string[] {
  return [...markdown.matchAll(new RegExp(`\`\`\`${lang}\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1] ?? '');
}

/**
 * Runs every example in order against `baseUrl`, as a reader would paste them: captures set
 * their variable, and each `# →` line is checked (a JSON object the answer contains, or the
 * status of a `-w '%{http_code}'` example). An example without `-w` must succeed (2xx) unless
 * the answer it shows is an error body.
 */
export async function runExamples(baseUrl: string, examples: readonly CurlExample[], vars = new Map<string, string>()): Promise<Map<string, string>> {
  for (const example of examples) {
    const { status, output } = await runCurl(baseUrl, example, vars);
    if (!example.statusOnly && !showsError(example.expected)) expect(status, `${example.line}\n${output}`).toBeLessThan(300);
    if (example.capture) {
      const value = (JSON.parse(output) as Record<string, unknown>)[example.capture.field];
      expect(typeof value, example.line).toBe('string');
      vars.set(example.capture.variable, value as string);
    }
    if (example.expected !== undefined) expectOutput(output, substitute(example.expected, vars), example.line);
  }
  return vars;
}

/** An expected answer that is an error body (it has a `code`): the one kind of example that may fail. */
function showsError(expected: string | undefined): boolean {
  if (!expected?.startsWith('{')) return false;
  return 'code' in (JSON.parse(expected) as object);
}

/** `…` in an expected line stands for any text: "…" for any value, "ab…" for any string starting "ab". */
const ELLIPSIS = '…';

function wildcardPattern(text: string): RegExp {
  return new RegExp(
    `^${text
      .split(ELLIPSIS)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('[\\s\\S]*')}$`,
  );
}

/** The expected JSON with its `…` strings turned into matchers. */
function withWildcards(value: unknown): unknown {
  if (value === ELLIPSIS) return expect.anything();
  if (typeof value === 'string' && value.includes(ELLIPSIS)) return expect.stringMatching(wildcardPattern(value));
  if (Array.isArray(value)) return value.map(withWildcards);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withWildcards(v)]));
  return value;
}

/**
 * Checks what a command printed against the `# →` line shown after it: a JSON object the output
 * must contain, else the exact text (trimmed); `…` stands for any text in either.
 */
function expectOutput(output: string, expected: string, label: string): void {
  if (expected.startsWith('{')) {
    let actual: unknown;
    try {
      actual = JSON.parse(output);
    } catch {
      throw new Error(`${label}\nexpected JSON containing ${expected}, got: ${output}`);
    }
    expect(actual, label).toMatchObject(withWildcards(JSON.parse(expected)) as object);
  } else if (expected.includes(ELLIPSIS)) expect(output.trim(), label).toMatch(wildcardPattern(expected));
  else expect(output.trim(), label).toBe(expected);
}

/**
 * A ```sh block marked as working verbatim: the line before its fence is `<!-- runnable -->`,
 * or `<!-- runnable SLUICE_X__Y=value … -->` when the block needs a gateway started with those
 * settings (as `SLUICE_X__Y=value npx sluice serve` would apply them).
 */
export interface RunnableBlock {
  /** `docs/audit.md:120`: where its fence is. */
  where: string;
  env: Record<string, string>;
  script: string;
}

const RUNNABLE = /^<!-- runnable\b(.*?)-->\n```sh\n([\s\S]*?)^```$/gm;

/** `NAME=value …` (a value may be single- or double-quoted, as in a shell) as an environment. */
function settings(text: string, where: string): Record<string, string> {
  const env: Record<string, string> = {};
  const rest = text.replace(
    /([A-Z][A-Z0-9_]*)=(?:'([^']*)'|"([^"]*)"|([^\s'"]*))(?=\s|$)/g,
    (_all, name: string, single?: string, double?: string, bare?: string) => {
      env[name] = single ?? double ?? bare ?? '';
      return '';
    },
  );
  if (rest.trim()) throw new Error(`${where}: a runnable marker takes NAME=value settings, not ${rest.trim()}`);
  return env;
}

/** The runnable blocks of a markdown text, in order. A marker not followed by a ```sh block is an error. */
export function runnableBlocks(markdown: string, file: string): RunnableBlock[] {
  // A marker shown inside a ````-fence (how docs/development.md explains the convention) is an
  // example, not a marker: blank those fences out, keeping the line numbers.
  const text = markdown.replace(/^(`{4,})[^\n]*\n[\s\S]*?^\1`*$/gm, (fence) => fence.replace(/[^\n]/g, ''));
  const blocks = [...text.matchAll(RUNNABLE)].map((m) => {
    const where = `${file}:${text.slice(0, m.index).split('\n').length + 1}`;
    return { where, env: settings(m[1] ?? '', where), script: m[2] ?? '' };
  });
  const markers = text.match(/^<!-- runnable\b/gm)?.length ?? 0;
  if (markers !== blocks.length) throw new Error(`${file}: ${markers - blocks.length} runnable marker(s) not directly followed by a \`\`\`sh block`);
  return blocks;
}

/** Where a block's run keeps its instrumentation: the curl shim, its status log and the variables of each check. */
interface Harness {
  dir: string;
  bin: string;
}

/**
 * A `curl` that sends `localhost:8080` (the address the docs use) to the test's gateway and logs
 * the status of each answer, so the block runs byte for byte as written.
 */
function curlShim(realCurl: string): string {
  return `#!/bin/sh
h=$(mktemp) || exit 1
'${realCurl}' --connect-to "localhost:8080:127.0.0.1:$DOCTEST_PORT" --connect-to "127.0.0.1:8080:127.0.0.1:$DOCTEST_PORT" -D "$h" "$@"
rc=$?
status=$(awk 'toupper($1) ~ /^HTTP\\// { s = $2 } END { print (s == "" ? "none" : s) }' "$h")
rm -f "$h"
printf '%s %s\\n' "$status" "$(printf %s "$*" | tr '\\n' ' ')" >> "$DOCTEST_DIR/curl.log"
exit $rc
`;
}

/** Where a command is on the PATH; fails the run, rather than a block, when it is missing. */
function tool(name: string): string {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(`the runnable doc blocks need ${name} on the PATH (apt-get install ${name})`);
  }
}

function harness(): Harness {
  const realCurl = tool('curl');
  tool('jq');
  const dir = mkdtempSync(join(tmpdir(), 'sluice-doc-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'curl'), curlShim(realCurl), { mode: 0o755 });
  return { dir, bin };
}

/** One `# →` line: which check it is, and the shell variables its text names. */
interface Check {
  expected: string;
  variables: string[];
}

/**
 * The script with each `# → …` line replaced by instrumentation: a separator on stdout (so the
 * output before it is that check's), a mark in the curl log, and the values of the variables
 * the expected text names.
 */
function instrument(script: string): { script: string; checks: Check[] } {
  const checks: Check[] = [];
  const lines = script.split('\n').map((line) => {
    const m = /^\s*# →\s?(.*)$/.exec(line);
    if (!m) return line;
    const expected = (m[1] ?? '').trim();
    const variables = [...new Set([...expected.matchAll(/\$(\w+)/g)].map((v) => v[1] ?? ''))];
    const n = checks.push({ expected, variables }) - 1;
    const values = variables.length ? `; printf '%s\\0' ${variables.map((v) => `"\${${v}-}"`).join(' ')} > "$DOCTEST_DIR/vars.${n}"` : '';
    return `printf '\\n@@doctest check %s@@\\n' ${n}; echo '--- ${n}' >> "$DOCTEST_DIR/curl.log"${values}`;
  });
  return { script: lines.join('\n'), checks };
}

/**
 * Runs a block with `sh -e` from the repository root (so `npx sluice` is the workspace's) against
 * the gateway at `baseUrl`; only `localhost:8080` is redirected, the block's text is not changed.
 * It must exit 0; each `# →` line must match what the commands since the previous one printed
 * (`$NAME` replaced by the shell's value); and every curl call must answer 2xx, except the last
 * one before a check that shows an error body or a bare status.
 */
export async function runBlock(baseUrl: string, block: RunnableBlock): Promise<void> {
  const { dir, bin } = harness();
  try {
    const { script, checks } = instrument(block.script);
    // Asynchronously: the gateway answering the block's curl calls may run in this very process.
    const result = await runShell(script, { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, DOCTEST_PORT: new URL(baseUrl).port, DOCTEST_DIR: dir });
    const label = `${block.where}\n${block.script}`;
    expect(result.code, `${label}\nexit ${result.code}; stderr:\n${result.stderr}\nstdout:\n${result.stdout}`).toBe(0);
    const outputs = result.stdout.split(/\n?@@doctest check \d+@@\n/);
    checks.forEach((check, n) => {
      const values = check.variables.length ? readFileSync(join(dir, `vars.${n}`), 'utf8').split('\0') : [];
      const vars = new Map(check.variables.map((v, i) => [v, values[i] ?? '']));
      expectOutput(outputs[n] ?? '', substitute(check.expected, vars), `${block.where}: # → ${check.expected}`);
    });
    expectStatuses(readFileSync(join(dir, 'curl.log'), { encoding: 'utf8', flag: 'a+' }), checks, block.where);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `sh -e -c script` from the repository root (so `npx sluice` is the workspace's), killed after a minute. */
function runShell(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | string; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-e', '-c', script], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code: code ?? String(signal), stdout, stderr }));
  });
}

/** The curl log: `<status> <args>` per call, `--- <n>` at each check. */
function expectStatuses(log: string, checks: readonly Check[], where: string): void {
  let calls: string[] = [];
  const judge = (check: Check | undefined) => {
    const mayFail = check !== undefined && (showsError(check.expected) || /^\d{3}$/.test(check.expected));
    const mustSucceed = mayFail ? calls.slice(0, -1) : calls;
    for (const call of mustSucceed) expect(call, `${where}: every curl call answers 2xx unless its shown answer is an error`).toMatch(/^2\d\d /);
    calls = [];
  };
  for (const line of log.split('\n').filter(Boolean)) {
    const mark = /^--- (\d+)$/.exec(line);
    if (mark) judge(checks[Number(mark[1])]);
    else calls.push(line);
  }
  judge(undefined);
}
