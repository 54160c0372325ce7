import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { poll } from './poll.js';

/** The built CLI (npm test builds first); child processes run exactly what `npx sluice` runs. */
const SLUICE_BIN = fileURLToPath(new URL('../../apps/cli/bin/sluice.js', import.meta.url));

export interface SluiceProcess {
  child: ChildProcess;
  /** Base URL of its HTTP server (API or worker health server). */
  url: string;
  /** stdout+stderr lines so far (JSON log lines, mostly). */
  output: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): void;
}

export interface SpawnOptions {
  port: number;
  env?: Record<string, string>;
  /** Path polled until it answers 200 (default /ready). Null: do not wait. */
  waitFor?: string | null;
  timeoutMs?: number;
}

export async function spawnSluice(args: string[], opts: SpawnOptions): Promise<SluiceProcess> {
  const child = spawn(process.execPath, [SLUICE_BIN, ...args], {
    // No drain delay unless a test asks: SIGTERM would otherwise wait 5 s in every test that stops a process.
    env: { ...process.env, SLUICE_LOGGING__LEVEL: 'warn', SLUICE_SERVER__DRAIN_DELAY_SECONDS: '0', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const collect = (chunk: Buffer) => output.push(...chunk.toString().split('\n').filter(Boolean));
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const proc: SluiceProcess = {
    child,
    url: `http://127.0.0.1:${opts.port}`,
    output,
    exited,
    kill: (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
  const path = opts.waitFor === undefined ? '/ready' : opts.waitFor;
  if (path !== null) await waitUntilReady(proc, path, opts.timeoutMs ?? 20_000);
  return proc;
}

async function waitUntilReady(proc: SluiceProcess, path: string, timeoutMs: number): Promise<void> {
  let exited = false;
  void proc.exited.then(() => (exited = true));
  const ready = async (): Promise<boolean> => {
    if (exited) throw new Error(`sluice exited before becoming ready:\n${proc.output.join('\n')}`);
    try {
      return (await fetch(`${proc.url}${path}`)).status === 200;
    } catch {
      return false; // not listening yet
    }
  };
  try {
    await poll(`sluice to answer ${path}`, ready, { timeoutMs, intervalMs: 100 });
  } catch (err) {
    if (exited) throw err;
    proc.kill('SIGKILL');
    throw new Error(`sluice did not become ready within ${timeoutMs} ms:\n${proc.output.join('\n')}`);
  }
}

/** Runs the CLI to completion (for commands that end: encrypt, help, refused starts). */
export function runSluice(args: string[], opts: { env?: Record<string, string>; stdin?: string } = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [SLUICE_BIN, ...args], { env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin.end(opts.stdin ?? '');
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** SIGTERM: exit 0 within `withinMs` (the last lines printed when not). */
export async function expectQuickCleanExit(proc: SluiceProcess, withinMs = 8000): Promise<void> {
  const started = Date.now();
  proc.kill('SIGTERM');
  const exit = await proc.exited;
  if (exit.code !== 0) console.log(proc.output.slice(-12).join('\n'));
  expect(exit.code).toBe(0);
  expect(Date.now() - started).toBeLessThan(withinMs);
}
