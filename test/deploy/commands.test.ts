import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RunningRedis } from '../support/redis-server.js';
import { deployment, productionValues } from './support/chart.js';
import { HELM_TEMPLATE_DEFAULT, HELM_TEMPLATE_PRODUCTION } from './support/commands.js';
import { loadCompose } from './support/compose.js';
import {
  chartContainer,
  composeContainer,
  healthcheckUrl,
  runContainer,
  setRedisPassword,
  type ContainerSpec,
  type RunningContainer,
} from './support/container.js';
import { REPO_ROOT, render } from './support/helm.js';

/**
 * No Docker engine here, so the image is not built; instead the exact command lines, environment
 * and mounts that docker-compose.yml and the chart give the containers run as local processes
 * (entrypoint `sluice` = the workspace bin) against a private redis-server.
 */

const HEALTHCHECK_IN_IMAGE = '/app/deploy/healthcheck.mjs'; // COPY deploy/healthcheck.mjs /app/deploy/healthcheck.mjs

/** The example credentials file's demo key (deploy/examples/credentials.yaml); the example config enables auth. */
const DEMO_AUTH = { authorization: 'Bearer demo-admin-key' };

const dispatch = (url: string, action: Record<string, unknown>) =>
  fetch(`${url}/v1/dispatch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...DEMO_AUTH },
    body: JSON.stringify({ namespace: 'payments', tenant: 'acme', provider: 'email', action_type: 'send', payload: { to: 'a@example.com' }, ...action }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as { outcome?: string } }));

/** Runs a healthcheck argv (`node /app/deploy/healthcheck.mjs [URL]`) against a running container. */
function runHealthcheck(argv: string[], c: RunningContainer, env: Record<string, string> = {}): Promise<number | null> {
  const args = argv
    .slice(1)
    .map((a) => (a === HEALTHCHECK_IN_IMAGE ? join(REPO_ROOT, 'deploy/healthcheck.mjs') : a.replace(`:${c.spec.containerPort}/`, `:${c.port}/`)));
  expect(argv[0]).toBe('node');
  return new Promise((resolve) => spawn(process.execPath, args, { stdio: 'ignore', env: { PATH: process.env.PATH ?? '', ...env } }).once('exit', resolve));
}

/** The Dockerfile's HEALTHCHECK (liveness on SLUICE_SERVER__PORT, default 8080) against an API container. */
function imageHealthcheck(c: RunningContainer) {
  const line = /^\s*CMD (\[.*\])\s*$/m.exec(readFileSync(join(REPO_ROOT, 'deploy/Dockerfile'), 'utf8').split('HEALTHCHECK')[1] ?? '');
  const argv = JSON.parse(line?.[1] ?? '[]') as string[];
  return runHealthcheck(argv, c, { SLUICE_SERVER__PORT: String(c.port) });
}

/** The rules of deploy/examples/rules/example.yaml, in priority order. */
const EXAMPLE_RULES = ['drop-load-test-tenant', 'receipts-once', 'sms-rate-limit'];

async function ruleNames(url: string): Promise<string[]> {
  const res = await fetch(`${url}/v1/rules`, { headers: DEMO_AUTH });
  expect(res.status).toBe(200);
  return ((await res.json()) as { rules: { name: string }[] }).rules.map((r) => r.name);
}

async function metricNames(url: string): Promise<Set<string>> {
  const text = await (await fetch(`${url}/metrics`, { headers: { accept: 'text/plain' } })).text();
  return new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] ?? ''));
}

function dashboardMetrics(): string[] {
  const text = readFileSync(join(REPO_ROOT, 'deploy/grafana/dashboards/sluice.json'), 'utf8');
  return [...new Set([...text.matchAll(/\bsluice_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, '')))];
}

async function stopAll(running: RunningContainer[]) {
  for (const r of running) r.proc.kill('SIGTERM');
  return Promise.all(running.map((r) => Promise.race([r.proc.exited, new Promise((res) => setTimeout(res, 15_000)).then(() => r.proc.kill('SIGKILL'))])));
}

describe('docker-compose.yml commands: serve --no-worker ×3 and worker ×2 on Redis', () => {
  const compose = loadCompose();
  let redis: RunningRedis;
  const running: RunningContainer[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    const specs: ContainerSpec[] = [];
    for (const name of ['api', 'worker']) {
      const svc = compose.services[name] ?? {};
      for (let i = 1; i <= (svc.deploy?.replicas ?? 1); i++) specs.push(composeContainer(`${name}-${i}`, svc));
    }
    running.push(...(await Promise.all(specs.map((s) => runContainer(s, redis.url)))));
  }, 90_000);

  afterAll(async () => {
    await stopAll(running);
    await redis?.stop();
  }, 30_000);

  it('every replica becomes ready and passes its compose healthcheck', async () => {
    expect(running.map((r) => r.spec.name)).toEqual(['api-1', 'api-2', 'api-3', 'worker-1', 'worker-2']);
    for (const r of running) {
      const svc = compose.services[r.spec.name.replace(/-\d+$/, '')] ?? {};
      expect(healthcheckUrl(svc).port).toBe(String(r.spec.containerPort));
      expect(await runHealthcheck(svc.healthcheck?.test?.slice(1) ?? [], r), r.spec.name).toBe(0);
    }
    expect(await imageHealthcheck(running[0]!)).toBe(0);
  });

  it('every API replica dispatches; the mounted rules and config load cleanly', async () => {
    const apis = running.filter((r) => r.spec.name.startsWith('api'));
    for (const api of apis) {
      const res = await dispatch(api.proc.url, {});
      expect(res.status).toBe(200);
      expect(res.body.outcome).toBe('executed');
    }
    for (const api of apis) expect(await ruleNames(api.proc.url)).toEqual(EXAMPLE_RULES);
    expect((await dispatch(apis[1]!.proc.url, { tenant: 'loadtest' })).body.outcome).toBe('suppressed');
    for (const r of running)
      expect(
        r.proc.output.filter((l) => /rule not loaded|"level":(50|60)/.test(l)),
        r.spec.name,
      ).toEqual([]);
  });

  it('every sluice_* metric the Grafana dashboard queries is exported (API or worker)', async () => {
    const api = running.find((r) => r.spec.name === 'api-1')!;
    const worker = running.find((r) => r.spec.name === 'worker-1')!;
    const exported = new Set([...(await metricNames(api.proc.url)), ...(await metricNames(worker.proc.url))]);
    const missing = dashboardMetrics().filter((m) => !exported.has(m));
    expect(missing).toEqual([]);
  });

  it('every process drains and exits 0 on SIGTERM (docker compose stop)', async () => {
    const exits = running.map((r) => r.proc.exited);
    for (const r of running) r.proc.kill('SIGTERM');
    expect((await Promise.all(exits)).map((e) => e.code)).toEqual([0, 0, 0, 0, 0]);
  }, 30_000);
});

describe('helm chart commands (production values): api and worker containers on Redis with a password', () => {
  const docs = render(HELM_TEMPLATE_PRODUCTION);
  const values = productionValues();
  const password = 'chart-test-password';
  const secrets = {
    [values.externalRedis.existingSecret]: { [values.externalRedis.existingSecretPasswordKey]: password },
    [values.existingSecret]: {
      'auth-key': 'ab'.repeat(32),
      'credentials.yaml': readFileSync(join(REPO_ROOT, 'deploy/examples/credentials.yaml'), 'utf8'),
    },
  };
  let redis: RunningRedis;
  const running: RunningContainer[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    await setRedisPassword(redis.port, password);
    const specs = (['api', 'worker'] as const).map((c) => chartContainer(docs, deployment(docs, c)!, secrets));
    running.push(...(await Promise.all(specs.map((s) => runContainer(s, redis.url)))));
  }, 90_000);

  afterAll(async () => {
    await stopAll(running);
    await redis?.stop();
  }, 30_000);

  it('runs exactly the rendered args with the secret-derived Redis URL, and both become ready', () => {
    const [api, worker] = running;
    expect(api?.spec.args).toEqual(['serve', '--no-worker', '--config', '/etc/sluice/sluice.yaml']);
    expect(worker?.spec.args).toEqual(['worker', '--config', '/etc/sluice/sluice.yaml']);
    expect(api?.spec.env.SLUICE_STATE__URL).toBe(`redis://:${password}@redis.example.internal:6379/0`);
    expect(api?.spec.env.SLUICE_AUTH_KEY).toBe('ab'.repeat(32));
    expect(Object.keys(api?.spec.mounts ?? {}).sort()).toEqual(['/etc/sluice/credentials', '/etc/sluice/rules', '/etc/sluice/sluice.yaml']);
  });

  it('the API dispatches with the mounted rules, and the liveness probes answer', async () => {
    const api = running[0]!;
    expect((await dispatch(api.proc.url, {})).body.outcome).toBe('executed');
    expect(await ruleNames(api.proc.url)).toEqual(EXAMPLE_RULES); // from the rules ConfigMap mount
    expect((await fetch(`${api.proc.url}/health`)).status).toBe(200);
    expect((await fetch(`${running[1]!.proc.url}/health`)).status).toBe(200);
    for (const r of running)
      expect(
        r.proc.output.filter((l) => /rule not loaded|"level":(50|60)/.test(l)),
        r.spec.name,
      ).toEqual([]);
  });
});

describe('helm chart commands (default values): one `sluice serve` on the memory backend', () => {
  const docs = render(HELM_TEMPLATE_DEFAULT);
  let api: RunningContainer | undefined;

  beforeAll(async () => {
    api = await runContainer(chartContainer(docs, deployment(docs, 'api')!, {}), 'redis://unused:1');
  }, 60_000);
  afterAll(async () => {
    if (api) await stopAll([api]);
  });

  it('becomes ready, dispatches, and passes the image HEALTHCHECK', async () => {
    expect(api?.spec.args).toEqual(['serve', '--config', '/etc/sluice/sluice.yaml']);
    expect(api?.spec.env).toEqual({});
    expect((await dispatch(api!.proc.url, {})).body.outcome).toBe('executed');
    expect(await imageHealthcheck(api!)).toBe(0);
  });
});
