import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { TurnBufferedDestination } from './turn-buffered-destination.js';

const LOGGER = fileURLToPath(new URL('./logger.ts', import.meta.url));

/** Runs `code` (an ES module body with `createLogger` in scope) in a child process; its standard output's lines. */
function childOutput(code: string): Promise<string[]> {
  const script = `import { createLogger } from ${JSON.stringify(LOGGER)};\n${code}`;
  const child = spawn(process.execPath, ['--conditions=sluice-source', '--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out.split('\n').filter((l) => l !== '')) : reject(new Error(`child exited ${code}`))));
  });
}

/** The file's lines once it has `count` of them (or after 5 s). */
async function linesOf(file: string, count: number): Promise<string[]> {
  const deadline = Date.now() + 5000;
  let lines: string[] = [];
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    lines = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    if (lines.length >= count) break;
  }
  return lines;
}

describe('TurnBufferedDestination (the process log)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("writes a turn's lines in order once the turn has ended, without being flushed", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-log-'));
    dirs.push(dir);
    const file = join(dir, 'out.log');
    const destination = new TurnBufferedDestination(file);
    for (let i = 0; i < 50; i++) destination.write(`line ${i}\n`);
    const expected = Array.from({ length: 50 }, (_, i) => `line ${i}`);
    expect(await linesOf(file, expected.length)).toEqual(expected);
    // And after a flush (what pino's logger.flush() calls).
    destination.write('after\n');
    destination.flush();
    expect(await linesOf(file, expected.length + 1)).toEqual([...expected, 'after']);
  });

  it('writes the lines logged just before process.exit()', async () => {
    const lines = await childOutput(`const log = createLogger({ level: 'info', role: 'test' });
for (let i = 0; i < 200; i++) log.info({ i }, 'before exit');
process.exit(0);`);
    expect(lines.map((l) => (JSON.parse(l) as { i: number }).i)).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });

  it('writes every line of a process that ends on its own, over many turns', async () => {
    const lines = await childOutput(`const log = createLogger({ level: 'info', role: 'test' });
for (let turn = 0; turn < 20; turn++) {
  for (let i = 0; i < 10; i++) log.info({ n: turn * 10 + i }, 'line');
  await new Promise((resolve) => setImmediate(resolve));
}`);
    expect(lines.map((l) => (JSON.parse(l) as { n: number }).n)).toEqual(Array.from({ length: 200 }, (_, n) => n));
  });
});
