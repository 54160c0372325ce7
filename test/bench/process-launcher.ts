/**
 * Starts the processes under test (the built `sluice` CLI, the bare-Fastify baseline, the
 * round-robin proxy) as separate Node processes, waits until they answer, and stops them. Their
 * stdout/stderr go to a log file (sluice logs one line per request at the default level; a pipe
 * read by this process would compete for CPU), shown when a process fails.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SLUICE_BIN = fileURLToPath(new URL('../../apps/cli/bin/sluice.js', import.meta.url));
const BENCH_DIR = fileURLToPath(new URL('./', import.meta.url));

export interface Launched {
  role: string;
  pid: number;
  url: string;
  logFile: string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
  stop(graceMs?: number): Promise<void>;
  /** The last lines of its log. */
  logTail(lines?: number): string;
}

interface LaunchOptions {
  role: string;
  /** Node flags placed before the script (e.g. --cpu-prof). */
  nodeArgs?: string[];
  script: string;
  args: string[];
  port: number;
  /** Polled until it answers 200. */
  readyPath: string;
  logFile: string;
  timeoutMs?: number;
  env?: Record<string, string>;
}

async function launchNode(opts: LaunchOptions): Promise<Launched> {
  const fd = openSync(opts.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [...(opts.nodeArgs ?? []), opts.script, ...opts.args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', fd, fd],
    });
  } finally {
    closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${opts.role}: spawn failed`);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const logTail = (lines = 30) => {
    try {
      return readFileSync(opts.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  };
  const launched: Launched = {
    role: opts.role,
    pid,
    url: `http://127.0.0.1:${opts.port}`,
    logFile: opts.logFile,
    logTail,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  try {
    await waitUntilReady(launched, child, opts.readyPath, opts.timeoutMs ?? 30_000);
  } catch (err) {
    await launched.stop(1000);
    throw err;
  }
  return launched;
}

async function waitUntilReady(proc: Launched, child: ChildProcess, path: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${proc.role} exited before becoming ready (code ${child.exitCode}, signal ${child.signalCode}):\n${proc.logTail()}`);
    }
    try {
      const res = await fetch(`${proc.url}${path}`);
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${proc.role} did not become ready within ${timeoutMs} ms:\n${proc.logTail()}`);
}

/** `sluice serve|worker --config F --port N [--no-worker]` from the built CLI (npm run build first). */
export function launchSluice(opts: {
  role: string;
  command: 'serve' | 'worker';
  configFile: string;
  port: number;
  noWorker?: boolean;
  logFile: string;
  nodeArgs?: string[];
}): Promise<Launched> {
  const args = [opts.command, '--config', opts.configFile, '--port', String(opts.port), ...(opts.noWorker ? ['--no-worker'] : [])];
  return launchNode({ role: opts.role, nodeArgs: opts.nodeArgs, script: SLUICE_BIN, args, port: opts.port, readyPath: '/ready', logFile: opts.logFile });
}

/** A TypeScript entry script of test/bench, run through tsx (module loading only; no runtime hooks). */
export function launchBenchScript(opts: { role: string; file: string; args: string[]; port: number; logFile: string; nodeArgs?: string[] }): Promise<Launched> {
  return launchNode({
    role: opts.role,
    nodeArgs: ['--import', 'tsx', ...(opts.nodeArgs ?? [])],
    script: `${BENCH_DIR}${opts.file}`,
    args: opts.args,
    port: opts.port,
    readyPath: '/ready',
    logFile: opts.logFile,
  });
}
