import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCliArgs } from '../../apps/cli/src/args.js';
import { REPO_ROOT } from './support/helm.js';

const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8');

interface Instruction {
  op: string;
  args: string;
  stage: number;
}

/** Dockerfile instructions (continuations joined, comments dropped), tagged with their stage. */
function dockerfile(): Instruction[] {
  const lines = read('deploy/Dockerfile').replace(/\\\n/g, ' ').split('\n');
  let stage = -1;
  const out: Instruction[] = [];
  for (const line of lines.map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))) {
    const [, op = '', args = ''] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
    if (op.toUpperCase() === 'FROM') stage++;
    out.push({ op: op.toUpperCase(), args: args.replace(/\s+/g, ' '), stage });
  }
  return out;
}

describe('deploy/Dockerfile', () => {
  const steps = dockerfile();
  const stages = steps.filter((s) => s.op === 'FROM');
  const last = stages.length - 1;
  const runtime = steps.filter((s) => s.stage === last);
  const build = steps.filter((s) => s.stage === 0);
  const one = (op: string) => runtime.filter((s) => s.op === op).map((s) => s.args);

  it('is multi-stage on Node 24 slim: build with dev dependencies, runtime with production ones', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Dockerfile build-argument syntax, not a template literal.
    expect(stages.map((s) => s.args)).toEqual(['${NODE_IMAGE} AS build', '${NODE_IMAGE} AS runtime']);
    expect(steps.find((s) => s.op === 'ARG')?.args).toMatch(/^NODE_IMAGE=node:24-[a-z]+-slim$/);
    const buildRuns = build
      .filter((s) => s.op === 'RUN')
      .map((s) => s.args)
      .join('\n');
    expect(buildRuns).toMatch(/npm ci --no-audit --no-fund && npm run build/);
    expect(one('RUN').join('\n')).toMatch(/npm ci --omit=dev --ignore-scripts/);
    expect(one('COPY')).toContain('--from=build /out/ ./');
  });

  it('builds the native addon in the build stage and carries it into the runtime one, whose install runs no scripts', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean; optional?: boolean }> };
    // The native addons an install builds: msgpackr-extract only speeds msgpackr up (BullMQ's
    // encoder falls back to JavaScript without it); zstd-napi the PostgreSQL trail needs.
    const native = Object.keys(lock.packages).filter((p) => lock.packages[p]?.hasInstallScript && existsSync(join(REPO_ROOT, p, 'binding.gyp')));
    expect(native).toEqual(['node_modules/msgpackr-extract', 'node_modules/zstd-napi']);
    expect(build.find((s) => s.op === 'RUN' && s.args.includes('apt-get install'))?.args).toMatch(/python3 make g\+\+/);
    const runtimeOps = runtime.map((s) => `${s.op} ${s.args}`);
    const install = runtimeOps.findIndex((s) => s.includes('npm ci --omit=dev --ignore-scripts'));
    const addon = runtimeOps.indexOf(
      'COPY --from=build /src/node_modules/zstd-napi/build/Release/binding.node ./node_modules/zstd-napi/build/Release/binding.node',
    );
    const version = runtimeOps.findIndex((s) => s.includes('sluice --version'));
    // After the install (which would remove it), before the first run of the CLI.
    expect(install).toBeGreaterThanOrEqual(0);
    expect(addon).toBeGreaterThan(install);
    expect(version).toBeGreaterThan(addon);
    // Where zstd-napi looks for it.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the text of zstd-napi's own template literal.
    expect(read('node_modules/zstd-napi/binding.js')).toContain('./build/${buildType}/binding.node');
  });

  it('copies every workspace package generically (libs/*, apps/*): package.json, dist/ and bin/ only', () => {
    expect(build.filter((s) => s.op === 'COPY').map((s) => s.args)).toEqual(expect.arrayContaining(['libs ./libs', 'apps ./apps']));
    expect(build.find((s) => s.op === 'RUN' && s.args.includes('for dir in libs/* apps/*'))?.args).toMatch(/for part in dist bin/);
    const root = JSON.parse(read('package.json')) as { workspaces: string[] };
    for (const ws of root.workspaces) {
      expect(ws).toMatch(/^(libs|apps)\/[\w-]+$/);
      const pkg = JSON.parse(read(`${ws}/package.json`)) as { exports?: Record<string, string | Record<string, string>>; bin?: Record<string, string> };
      // At run time (no sluice-source condition) every export resolves into dist/ or is the copied package.json (apps/ui: the API finds the bundle by it).
      for (const [sub, conds] of Object.entries(pkg.exports ?? {})) {
        expect(typeof conds === 'string' ? conds : conds.default, `${ws} ${sub}`).toMatch(/^\.\/(dist\/|package\.json$)/);
      }
      for (const bin of Object.values(pkg.bin ?? {})) expect(bin).toMatch(/^\.\/bin\//);
    }
  });

  it('runs as a non-root user with `sluice` as entrypoint and `serve` as default command', () => {
    expect(one('USER')).toEqual(['1000:1000']);
    expect(one('EXPOSE').join(' ').split(' ')).toContain('8080');
    expect(one('ENTRYPOINT')).toEqual(['["sluice"]']);
    const cmd = JSON.parse(one('CMD')[0] ?? '[]') as string[];
    expect(parseCliArgs(cmd)).toMatchObject({ command: 'serve', noWorker: false });
    // `sluice` on PATH is the workspace bin (what `npx sluice` runs)
    const cli = JSON.parse(read('apps/cli/package.json')) as { bin: { sluice: string } };
    expect(cli.bin.sluice).toBe('./bin/sluice.js');
    expect(one('RUN').join('\n')).toContain('ln -s /app/apps/cli/bin/sluice.js /usr/local/bin/sluice');
  });

  it("caps V8's young generation through NODE_OPTIONS, which node accepts: within 3 × 16 MB under churn", async () => {
    const env = one('ENV').join(' ');
    const options = /NODE_OPTIONS=(\S+)/.exec(env)?.[1];
    expect(options).toBe('--max-semi-space-size=16');
    // Allocation churn grows the young generation to its cap; node refuses an option not allowed there.
    const churn = `let k=[];for(let i=0;i<3e6;i++){k.push({i});if(k.length>1e5)k=[]}
      console.log(require('node:v8').getHeapSpaceStatistics().find((s)=>s.space_name==='new_space').space_size)`;
    const child = spawn(process.execPath, ['-e', churn], { env: { ...process.env, NODE_OPTIONS: options } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(Number(out)).toBeGreaterThan(0);
    expect(Number(out)).toBeLessThanOrEqual(3 * 16 * 2 ** 20);
  });

  it('HEALTHCHECK probes the liveness endpoint with the script it copies in', () => {
    expect(one('HEALTHCHECK')[0]).toMatch(/CMD \["node", "\/app\/deploy\/healthcheck\.mjs"\]$/);
    expect(one('COPY')).toContain('deploy/healthcheck.mjs /app/deploy/healthcheck.mjs');
  });
});

/** Minimal .dockerignore semantics: last matching pattern wins, `!` re-includes, `**` spans dirs. */
function ignored(patterns: string[], path: string): boolean {
  let result = false;
  for (const raw of patterns) {
    const negate = raw.startsWith('!');
    const glob = negate ? raw.slice(1) : raw;
    const body = glob
      .split('/')
      .map((part) =>
        part === '**'
          ? '.*'
          : part
              .replace(/[.+^${}()|[\]\\]/g, '\\$&')
              .replace(/\*/g, '[^/]*')
              .replace(/\?/g, '[^/]'),
      )
      .join('/')
      .replace(/\.\*\//g, '(?:.*/)?');
    if (new RegExp(`^${body}(?:/.*)?$`).test(path)) result = !negate;
  }
  return result;
}

describe('.dockerignore', () => {
  const patterns = read('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));

  it('keeps everything the Dockerfile copies from the context', () => {
    const sources = dockerfile()
      .filter((s) => s.op === 'COPY' && !s.args.startsWith('--from'))
      .flatMap((s) => s.args.split(' ').slice(0, -1));
    expect(sources).toContain('libs');
    for (const src of [...sources, 'libs/core/src/index.ts', 'apps/cli/bin/sluice.js']) expect(ignored(patterns, src), src).toBe(false);
  });

  it('drops dependencies, build output, tests and VCS data', () => {
    for (const p of [
      'node_modules/x/index.js',
      'libs/core/node_modules/a',
      'libs/core/dist/index.js',
      'libs/state/test/a.ts',
      'libs/core/src/x.test.ts',
      '.git/HEAD',
      'docs/deploy.md',
      'helm/sluice/Chart.yaml',
    ]) {
      expect(ignored(patterns, p), p).toBe(true);
    }
  });
});

describe('deploy/healthcheck.mjs', () => {
  /** Runs the script without blocking the event loop (the test's HTTP server must answer). */
  const check = (args: string[], env: Record<string, string> = {}) =>
    new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, [join(REPO_ROOT, 'deploy/healthcheck.mjs'), ...args], {
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: 'ignore',
      });
      child.once('exit', (code) => resolve(code));
    });

  it('exits 0 on 2xx, 1 on other statuses and on connection errors; defaults to the API liveness URL', async () => {
    const server = createServer((req, res) => {
      res.statusCode = req.url === '/health' ? 200 : 503;
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      expect(await check([`http://127.0.0.1:${port}/health`])).toBe(0);
      expect(await check([`http://127.0.0.1:${port}/ready`])).toBe(1);
      expect(await check([], { SLUICE_SERVER__PORT: String(port) })).toBe(0);
    } finally {
      server.close();
    }
    expect(await check(['http://127.0.0.1:1/health'])).toBe(1);
  });
});
