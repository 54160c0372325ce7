import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { poll } from './poll.js';

/*
 * Debian's Prometheus, Alertmanager and amtool (packages prometheus, prometheus-alertmanager;
 * .ci/run installs them), each on a free port with its files in a temporary directory.
 */

export interface RunningProgram {
  url: string;
  dir: string;
  /** Rewrites a file of its directory (rules, config) and makes the program reload it. */
  rewrite(file: string, text: string): Promise<void>;
  stop(): Promise<void>;
}

async function start(bin: string, files: Record<string, string>, args: (dir: string, port: number) => string[], ready: string): Promise<RunningProgram> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-prom-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const port = await freePort();
  const child: ChildProcess = spawn(bin, args(dir, port), { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-8000);
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await poll(`${bin} ready`, async () => (await fetch(`${url}${ready}`).catch(() => null))?.ok === true, { timeoutMs: 20_000, intervalMs: 100 });
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${bin} did not start: ${String(err)}\n${log}`);
  }
  return {
    url,
    dir,
    async rewrite(file, text) {
      writeFileSync(join(dir, file), text);
      const res = await fetch(`${url}/-/reload`, { method: 'POST' });
      if (!res.ok) throw new Error(`${bin} reload: ${res.status} ${await res.text()}`);
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Prometheus evaluating `rules.yml` every second and sending alerts to `alertmanagerHostPort` (Alertmanager API v2, HTTP basic auth when given). */
export function startPrometheus(opts: {
  alertmanagerHostPort: string;
  rules: string;
  basicAuth?: { username: string; password: string };
}): Promise<RunningProgram> {
  const auth = opts.basicAuth
    ? `\n      basic_auth: { username: ${JSON.stringify(opts.basicAuth.username)}, password: ${JSON.stringify(opts.basicAuth.password)} }`
    : '';
  const config = `
global: { evaluation_interval: 1s, scrape_interval: 1m }
rule_files: [rules.yml]
alerting:
  alertmanagers:
    - api_version: v2${auth}
      static_configs: [{ targets: [${JSON.stringify(opts.alertmanagerHostPort)}] }]
`;
  return start(
    'prometheus',
    { 'prometheus.yml': config, 'rules.yml': opts.rules },
    (dir, port) => [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--web.enable-lifecycle',
      '--rules.alert.resend-delay=1s',
    ],
    '/-/ready',
  );
}

/** Alertmanager (no cluster) routing every alert at once to one webhook receiver, with a bearer token. */
export function startAlertmanager(opts: { webhookUrl: string; bearer: string }): Promise<RunningProgram> {
  const config = `
route: { receiver: sluice, group_by: [alertname], group_wait: 0s, group_interval: 1s, repeat_interval: 1h }
receivers:
  - name: sluice
    webhook_configs:
      - url: ${JSON.stringify(opts.webhookUrl)}
        send_resolved: true
        http_config: { authorization: { credentials: ${JSON.stringify(opts.bearer)} } }
`;
  return start(
    'prometheus-alertmanager',
    { 'alertmanager.yml': config },
    (dir, port) => [
      `--config.file=${join(dir, 'alertmanager.yml')}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
    ],
    '/-/ready',
  );
}

/** Runs amtool against `url`; its stdout, or a rejection with its stderr. */
export async function amtool(url: string, args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)('amtool', [`--alertmanager.url=${url}`, ...args], { timeout: 20_000 });
  return stdout;
}
