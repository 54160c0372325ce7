import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { COMMANDS, type CommandName, type CommandSpec } from '../../apps/cli/src/commands.js';
import { parseCliArgs } from '../../apps/cli/src/args.js';
import { poll } from '../support/poll.js';

/*
 * Issue 18 (CLI): help per command listing every accepted flag, our own usage errors, config
 * errors exit 2 (the file checked before flags replace its values), and SIGTERM/SIGINT to `npm
 * start` or `npx sluice serve` stopping the server instead of orphaning it. Runs the built CLI.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'apps/cli/bin/sluice.js');

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `cmd` to its end; one that has not ended within the limit is killed (code null). */
function run(cmd: string, args: string[], opts: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<Finished> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const limit = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 15_000);
    child.once('exit', (code) => {
      clearTimeout(limit);
      resolve({ code, stdout, stderr });
    });
  });
}

const sluice = (args: string[], opts?: { env?: Record<string, string>; timeoutMs?: number }) => run(process.execPath, [BIN, ...args], opts);

function tempFile(name: string, text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-cli-hardening-')), name);
  writeFileSync(file, text);
  return file;
}

describe('sluice help', () => {
  it('prints the help of the command asked about, not the general one', async () => {
    const general = await sluice(['--help']);
    for (const name of ['serve', 'worker', 'encrypt', 'help', 'version']) {
      const res = await sluice([name, '--help']);
      expect(res).toMatchObject({ code: 0, stderr: '' });
      expect(res.stdout).toMatch(new RegExp(`^Usage: sluice ${name} `));
      expect(res.stdout).not.toBe(general.stdout);
      expect((await sluice(['help', name])).stdout).toBe(res.stdout);
    }
  });

  it('lists the flags the tester found missing', async () => {
    const general = (await sluice(['--help'])).stdout;
    expect(general).toMatch(/-v, --version/);
    expect(general).toMatch(/-h, --help/);
    const serve = (await sluice(['serve', '--help'])).stdout;
    for (const flag of ['-c, --config FILE', '-p, --port N', '--host H', '--no-worker', '-h, --help']) expect(serve).toContain(flag);
    const worker = (await sluice(['worker', '-h'])).stdout;
    for (const flag of ['-c, --config FILE', '-p, --port N', '--host H']) expect(worker).toContain(flag);
    expect(worker).not.toContain('--no-worker');
    expect((await sluice(['encrypt', '--help'])).stdout).toContain('SLUICE_AUTH_KEY');
  });

  it('lists exactly the options the parser accepts, for every command', async () => {
    for (const name of Object.keys(COMMANDS) as CommandName[]) {
      // Two-word commands (`silence add`) are two arguments; required positionals get a placeholder.
      const spec: CommandSpec = COMMANDS[name];
      const command = [...name.split(' '), ...Array.from({ length: spec.positionals?.min ?? 0 }, () => 'a=b')];
      const help = (await sluice([...name.split(' '), '--help'])).stdout;
      const listed = [...help.matchAll(/^ {2}(?:-(\w), )? *--([a-z-]+)(?: ([A-Z]+))?/gm)].map(([, short, long, value]) => ({ short, long, value }));
      expect(listed.map((o) => o.long).sort()).toEqual(spec.options.map((o) => o.name).sort());
      for (const { short, long, value } of listed) {
        const withValue = (flag: string) => (value ? [flag, value === 'N' ? '8080' : 'x'] : [flag]);
        expect(() => parseCliArgs([...command, ...withValue(`--${long}`)]), `${name} --${long}`).not.toThrow();
        if (short) expect(() => parseCliArgs([...command, ...withValue(`-${short}`)]), `${name} -${short}`).not.toThrow();
      }
    }
  });
});

describe('sluice usage errors', () => {
  it('answers an unknown option in its own words, exit 2', async () => {
    const res = await sluice(['serve', '--foo']);
    expect(res).toEqual({ code: 2, stdout: '', stderr: "sluice: unknown option --foo for 'serve'; see sluice serve --help\n" });
    const worker = await sluice(['worker', '--no-worker']);
    expect(worker.code).toBe(2);
    expect(worker.stderr).toBe("sluice: unknown option --no-worker for 'worker'; see sluice worker --help\n");
  });

  it('names a missing value, a value given to a switch and a stray argument', async () => {
    expect(await sluice(['serve', '--port'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^sluice: option --port needs a value/) });
    expect(await sluice(['serve', '--config', '--port', '1'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/option --config needs a value/) });
    expect(await sluice(['serve', '--no-worker=yes'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/option --no-worker takes no value/) });
    expect(await sluice(['serve', 'now'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/unexpected argument 'now' for 'serve'/) });
    expect(await sluice(['serve', '--port', '80x'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--port must be an integer 0-65535, got "80x"/) });
    for (const res of [await sluice(['serve', '--foo']), await sluice(['--port', '1', 'serve'])]) expect(res.stderr).not.toMatch(/To specify a positional/);
  });
});

describe('sluice exit statuses', () => {
  it('refuses a bad value in the config file even when a flag overrides it (exit 2, naming the key)', async () => {
    const file = tempFile('sluice.yaml', 'server:\n  port: "eighty"\n');
    const res = await sluice(['serve', '--config', file, '--port', '0', '--host', '127.0.0.1'], { timeoutMs: 10_000 });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/invalid configuration \(.*sluice\.yaml\):\n {2}- server\.port: /);
  });

  it('exits 2 for a credentials file that is missing or invalid', async () => {
    const missing = tempFile('sluice.yaml', 'auth:\n  enabled: true\n  file: /nonexistent/credentials.yaml\n');
    const res = await sluice(['serve', '--config', missing, '--port', '0'], { timeoutMs: 10_000 });
    expect(res).toMatchObject({ code: 2, stderr: expect.stringMatching(/cannot read credentials file \/nonexistent\/credentials\.yaml/) });
    const credentials = tempFile('credentials.yaml', 'users: 5\n');
    const invalid = tempFile('sluice.yaml', `auth:\n  enabled: true\n  file: ${credentials}\n`);
    const bad = await sluice(['serve', '--config', invalid, '--port', '0'], { timeoutMs: 10_000 });
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringMatching(/invalid credentials file [^\n]*:\n[\s\S]*- users: /) });
  });

  it('exits 2 for configuration a feature refuses at start-up (a circuit breaker for no provider)', async () => {
    const breaker = tempFile('sluice.yaml', 'circuit_breaker:\n  enabled: true\n  providers:\n    ghost: {}\n');
    const res = await sluice(['serve', '--config', breaker, '--port', '0', '--host', '127.0.0.1'], { timeoutMs: 10_000 });
    expect(res).toMatchObject({ code: 2, stderr: expect.stringMatching(/circuit_breaker\.providers\.ghost: no provider of that name/) });
  });

  it('keeps exit 1 for a failure while running: Redis unreachable', async () => {
    const file = tempFile('sluice.yaml', 'state:\n  backend: redis\n  url: redis://127.0.0.1:1\n');
    const res = await sluice(['serve', '--config', file, '--port', '0', '--host', '127.0.0.1'], { timeoutMs: 25_000 });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/cannot connect to Redis/);
    // And as a JSON line, where a log pipeline sees it.
    const fatal = res.stdout.split('\n').find((l) => l.includes('"msg":"start failed"'));
    expect(JSON.parse(fatal ?? '{}')).toMatchObject({ level: 60, reason: expect.stringMatching(/^cannot connect to Redis/) });
  });
});

interface Launched {
  /** The process the signal goes to (npm, npx or sluice itself). */
  top: ChildProcess;
  exited: Promise<number | null>;
  /** The sluice process, from its `sluice listening` log line. */
  pid: number;
  port: number;
  /** Everything it wrote so far, stdout and stderr. */
  output(): string;
}

const launched: Launched[] = [];

/** Starts `cmd` (ending in `sluice serve`) on a port the kernel picks; resolves once it listens. */
async function launch(cmd: string, args: string[], env: Record<string, string> = {}): Promise<Launched> {
  const top = spawn(cmd, [...args, '--port', '0', '--host', '127.0.0.1'], {
    cwd: ROOT,
    env: { ...process.env, SLUICE_LOGGING__LEVEL: 'info', SLUICE_CONFIG: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => top.once('exit', (code) => resolve(code)));
  let output = '';
  top.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const listening = new Promise<{ pid: number; port: number }>((resolve, reject) => {
    top.stdout?.on('data', (c: Buffer) => {
      output += c.toString();
      const line = output.split('\n').find((l) => l.includes('"sluice listening"'));
      if (line) {
        const { pid, address } = JSON.parse(line) as { pid: number; address: string };
        resolve({ pid, port: Number(new URL(address).port) });
      }
    });
    void exited.then((code) => reject(new Error(`${cmd} exited (${code}) before listening:\n${output}`)));
  });
  listening.catch(() => {}); // raced below; a late exit must not be an unhandled rejection
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${cmd} did not listen:\n${output}`)), 30_000);
  });
  try {
    const started = { top, exited, ...(await Promise.race([listening, timeout])), output: () => output };
    launched.push(started);
    return started;
  } catch (err) {
    top.kill('SIGKILL');
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Processes whose parent is `pid` (Linux /proc), so an orphaned `sh -c` would show too. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]?.split(' ')[1] === String(pid);
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
}

/** After a signal to `top`: it exits, the server process is gone and the port answers no more. */
async function expectStopped(proc: Launched): Promise<number | null> {
  const code = await Promise.race([proc.exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 15_000).unref())]);
  expect(code, 'the signalled process exits').not.toBe('running');
  await poll(`sluice (pid ${proc.pid}) to exit`, () => !alive(proc.pid), { timeoutMs: 10_000, intervalMs: 100 });
  expect(await portOpen(proc.port)).toBe(false);
  return code as number | null;
}

afterEach(() => {
  // A failed run must not leave a server behind.
  for (const proc of launched.splice(0)) {
    for (const pid of [proc.pid, ...(proc.top.pid ? childrenOf(proc.top.pid) : [])]) if (alive(pid)) process.kill(pid, 'SIGKILL');
    proc.top.kill('SIGKILL');
  }
});

describe('signals reach the server through npm', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} to \`npm start\` stops the server, frees its port and exits 0`, async () => {
      const proc = await launch('npm', ['start', '--']);
      expect(proc.top.pid && childrenOf(proc.top.pid)).toEqual([proc.pid]); // no shell in between
      proc.top.kill(signal);
      expect(await expectStopped(proc)).toBe(0);
    });
  }

  it('SIGTERM to `npx sluice serve` stops the server too (its `sh -c` dies; sluice sees its parent go)', async () => {
    const proc = await launch('npx', ['--no', 'sluice', 'serve']); // --no: never fetch a "sluice" from the registry
    proc.top.kill('SIGTERM');
    await expectStopped(proc);
  });

  it('a signal while start-up still waits for Redis ends it at once: exit 0, logged (not a silent death by signal)', async () => {
    const free = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
      env: { ...process.env, SLUICE_STATE__BACKEND: 'redis', SLUICE_STATE__URL: `redis://127.0.0.1:${free}`, SLUICE_LOGGING__LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Redis does not answer: start-up waits for it (state.connect: about 5 s) past this line.
    await poll('start-up to begin', () => output.includes('"msg":"starting"'), { timeoutMs: 10_000, intervalMs: 20 });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('"msg":"shutting down before start-up finished"');
  });

  it('signals repeated during the drain are logged and ignored: the drain finishes, exit 0', async () => {
    const proc = await launch(process.execPath, [BIN, 'serve'], { SLUICE_SERVER__DRAIN_DELAY_SECONDS: '1' });
    proc.top.kill('SIGTERM');
    await poll('the drain to begin', () => proc.output().includes('"msg":"shutting down"'), { timeoutMs: 5_000, intervalMs: 10 });
    proc.top.kill('SIGTERM');
    proc.top.kill('SIGINT');
    expect(await expectStopped(proc)).toBe(0);
    expect(proc.output().match(/"msg":"already shutting down"/g)).toHaveLength(2);
    expect(proc.output()).toContain('"msg":"shutdown complete"');
  });

  it('warns at start-up of a SLUICE_ variable with `_` where `__` belongs, and does not apply it', async () => {
    const proc = await launch(process.execPath, [BIN, 'serve'], { SLUICE_SERVER_DRAIN_DELAY_SECONDS: '1' });
    const warning = proc
      .output()
      .split('\n')
      .find((line) => line.includes('"msg":"environment variable ignored"'));
    expect(JSON.parse(warning ?? '{}')).toMatchObject({ level: 40, variable: 'SLUICE_SERVER_DRAIN_DELAY_SECONDS', hint: expect.stringContaining('__') });
    proc.top.kill('SIGINT');
    expect(await expectStopped(proc)).toBe(0);
  });

  for (const signal of ['SIGINT', 'SIGHUP'] as const) {
    it(`${signal} to the sluice process itself stops it gracefully, exit 0`, async () => {
      const proc = await launch(process.execPath, [BIN, 'serve']);
      proc.top.kill(signal);
      expect(await expectStopped(proc)).toBe(0);
    });
  }
});
