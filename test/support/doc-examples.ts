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
    // An example showing an error body (it has a `code`) is the one kind that may fail.
    const showsError = example.expected?.startsWith('{') === true && 'code' in (JSON.parse(example.expected) as object);
    if (!example.statusOnly && !showsError) expect(status, `${example.line}\n${output}`).toBeLessThan(300);
    if (example.capture) {
      const value = (JSON.parse(output) as Record<string, unknown>)[example.capture.field];
      expect(typeof value, example.line).toBe('string');
      vars.set(example.capture.variable, value as string);
    }
    if (example.expected === undefined) continue;
    const expected = substitute(example.expected, vars);
    if (expected.startsWith('{')) expect(JSON.parse(output), example.line).toMatchObject(JSON.parse(expected));
    else expect(output.trim(), example.line).toBe(expected);
  }
  return vars;
}
