import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { poll } from './poll.js';
import { signalAndWait, stopServer } from './redis-node.js';

export interface RunningRedis {
  url: string;
  port: number;
  /** SIGKILL, as a host failure would (a later stop() only removes its directory). */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT: a Redis that stalls with its connections open (no reset), then wakes. */
  freeze(): void;
  thaw(): void;
  stop(): Promise<void>;
}

/**
 * Starts a private redis-server on a free port. Tests never share the machine's Redis, and a
 * missing redis-server is an error (Redis suites must fail, not skip, when Redis is absent).
 */
export async function startRedisServer(opts: { port?: number; args?: readonly string[] } = {}): Promise<RunningRedis> {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error('redis-server is not installed or not on PATH; the Redis test suites need it (.ci/run installs it)');
  }
  // A fixed port restarts a Redis where its clients expect it (fault tests).
  const port = opts.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'sluice-redis-'));
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'warning', ...(opts.args ?? [])],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  await waitForPort(port, 10_000);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill: () => signalAndWait(child, 'SIGKILL'),
    freeze: () => child.kill('SIGSTOP'),
    thaw: () => child.kill('SIGCONT'),
    stop: () => stopServer(child, dir),
  };
}

export async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  await poll(`redis-server to listen on port ${port}`, () => canConnect(port), { timeoutMs, intervalMs: 50 });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const sock = createConnection({ port, host: '127.0.0.1' }, () => {
      sock.end();
      resolve(true);
    });
    sock.on('error', () => resolve(false));
  });
}
