import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from './free-port.js';
import { poll } from './poll.js';

export interface RunningPostgres {
  /** A URL of the server's `postgres` database, as the superuser `sluice`. */
  url: string;
  port: number;
  /** Creates a database of its own for one suite and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Shuts the server down (fast: sessions are cut), keeping its data; up() starts it again on the same port. */
  down(): Promise<void>;
  up(): Promise<void>;
  stop(): Promise<void>;
}

/** The newest installed PostgreSQL's bin directory (Debian's layout), or the one pg_config names. */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return join(root, versions[0], 'bin');
  }
  const probe = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (probe.status === 0 && existsSync(join(probe.stdout.trim(), 'initdb'))) return probe.stdout.trim();
  throw new Error('PostgreSQL is not installed (initdb not found); the PostgreSQL test suites need it (.ci/run installs it)');
}

/**
 * PostgreSQL refuses to run as root: as root, initdb and the server run as the `postgres`
 * account the Debian package creates (spawned with its uid, so signals reach the server itself),
 * over a data directory handed to it.
 */
function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  if (!Number.isInteger(uid) || uid <= 0) throw new Error('running as root, and there is no `postgres` account to run PostgreSQL as');
  return { uid, gid: id('-g') };
}

/**
 * Starts a private PostgreSQL on a free port, in a temporary directory, tuned for tests (no
 * fsync). Tests never use the machine's own server, and a missing PostgreSQL is an error, not a skip.
 */
export async function startPostgresServer(): Promise<RunningPostgres> {
  const bin = binDir();
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const as = user ? { uid: user.uid, gid: user.gid, env: { ...process.env, HOME: dir } } : {};
  const init = spawnSync(join(bin, 'initdb'), ['-D', data, '-U', 'sluice', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
    encoding: 'utf8',
    cwd: dir,
    ...as,
  });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  const port = await freePort();
  const args = [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
  ];
  let stderr = '';
  const launch = (): ChildProcess => {
    const started = spawn(join(bin, 'postgres'), args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir, ...as });
    started.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    return started;
  };
  let child = launch();
  const url = `postgres://sluice@127.0.0.1:${port}/postgres`;
  /** Smart shutdown first (sessions a client is closing end normally: a fast shutdown sends them a FATAL that a closing client reports as an unhandled error), then fast, then kill. */
  const shutDown = async (steps: readonly (readonly ['SIGTERM' | 'SIGINT' | 'SIGKILL', number])[]) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    for (const [signal, waitMs] of steps) {
      child.kill(signal);
      if (await Promise.race([exited.then(() => true), sleep(waitMs).then(() => false)])) break;
    }
    await exited;
  };
  const stop = async () => {
    await shutDown([
      ['SIGTERM', 5000],
      ['SIGINT', 5000],
      ['SIGKILL', 0],
    ]);
    rmSync(dir, { recursive: true, force: true });
  };
  const ready = async () => {
    try {
      await poll(`PostgreSQL to accept connections on port ${port}`, () => canQuery(url), { timeoutMs: 20_000, intervalMs: 100 });
    } catch (err) {
      await stop();
      throw new Error(`${(err as Error).message}; its log: ${stderr}`);
    }
  };
  await ready();
  return {
    url,
    port,
    async createDatabase(name: string) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name.replaceAll('"', '')}"`);
      } finally {
        await client.end();
      }
      return `postgres://sluice@127.0.0.1:${port}/${name}`;
    },
    down: () =>
      shutDown([
        ['SIGINT', 10_000],
        ['SIGKILL', 0],
      ]),
    async up() {
      child = launch();
      await ready();
    },
    stop,
  };
}

async function canQuery(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
