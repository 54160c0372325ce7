import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCredentials } from '@sluice/auth/authentication';
import { loadConfig } from '@sluice/config';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { composeErrors, interpolate, loadCompose, mounts, type ComposeFile } from './support/compose.js';
import { REPO_ROOT } from './support/helm.js';

const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8');
const compose = loadCompose();

/** The example sluice.yaml as the api/worker containers load it (compose environment applied). */
function containerConfig(service: 'api' | 'worker', vars: Record<string, string> = {}) {
  const env = Object.fromEntries(Object.entries(compose.services[service]?.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), vars)]));
  const target = env.SLUICE_CONFIG;
  const mount = mounts(compose.services[service] ?? {}).find((m) => m.target === target);
  if (!mount) throw new Error(`${service}: SLUICE_CONFIG ${target} is not mounted`);
  return loadConfig({ file: join(REPO_ROOT, mount.source), env: { ...env, SLUICE_CONFIG: undefined } }).config;
}
const config = containerConfig('api');

describe('docker-compose.yml', () => {
  it('has Redis (AOF, healthcheck), 3 API replicas, 2 workers, a load balancer, monitoring (with Jaeger for traces) and an optional PostgreSQL, all checked', () => {
    expect(composeErrors(compose, { shutdownTimeoutSeconds: config.server.shutdown_timeout_seconds })).toEqual([]);
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'grafana', 'jaeger', 'lb', 'postgres', 'prometheus', 'redis', 'worker']);
  });

  it('the mounted sluice.yaml loads with the strict config schema in both roles', () => {
    for (const role of ['api', 'worker'] as const) {
      const c = containerConfig(role);
      expect(c.state).toMatchObject({ backend: 'redis', url: 'redis://redis:6379' });
      expect(c.audit.backend).toBe('state');
      // SLUICE_AUDIT_BACKEND=postgres (with --profile postgres) moves the trail to the compose database.
      expect(containerConfig(role, { SLUICE_AUDIT_BACKEND: 'postgres' }).audit).toMatchObject({
        backend: 'postgres',
        postgres: { url: 'postgres://sluice:sluice@postgres:5432/sluice', schema: 'sluice_audit' },
      });
      expect(c.server.port).toBe(8080);
      expect(c.worker.port).toBe(9091);
      // rules.directory points at the read-only rules mount
      const rules = mounts(compose.services[role] ?? {}).find((m) => m.target === c.rules.directory);
      expect(rules).toMatchObject({ source: './deploy/examples/rules', readOnly: true });
    }
  });

  it('the example credentials file is valid and hashes the documented demo key', () => {
    const text = read('deploy/examples/credentials.yaml');
    expect(() => parseCredentials(text, 'credentials.yaml', undefined)).not.toThrow();
    const creds = parse(text) as { api_keys: { key_hash: string }[] };
    expect(creds.api_keys[0]?.key_hash).toBe(createHash('sha256').update('demo-admin-key').digest('hex'));
  });

  const broken = (edit: (c: ComposeFile) => void) => {
    const copy = structuredClone(compose);
    edit(copy);
    return composeErrors(copy, { shutdownTimeoutSeconds: 30 });
  };
  it.each<[string, (c: ComposeFile) => void, string]>([
    ['redis healthcheck', (c) => delete c.services.redis?.healthcheck, 'redis: healthcheck missing'],
    ['redis AOF', (c) => (c.services.redis!.command = ['redis-server']), 'redis: AOF'],
    ['api replicas', (c) => (c.services.api!.deploy = { replicas: 2 }), 'api: deploy.replicas must be 3'],
    ['api --no-worker', (c) => (c.services.api!.command = ['serve']), 'api: command must be `serve --no-worker`'],
    ['unknown CLI command', (c) => (c.services.worker!.command = ['work']), "unknown command 'work'"],
    ['bad CLI flag', (c) => (c.services.worker!.command = ['worker', '--workers', '2']), 'not valid for the sluice CLI'],
    ['read-only mount', (c) => (c.services.api!.volumes = c.services.api!.volumes!.map((v) => v.replace(/:ro$/, ''))), 'must be read-only'],
    ['grace period', (c) => (c.services.worker!.stop_grace_period = '10s'), 'worker: stop_grace_period'],
    ['lb waits for api', (c) => delete c.services.lb?.depends_on, 'lb: must wait for healthy api replicas'],
    ['monitoring profile', (c) => delete c.services.grafana?.profiles, 'grafana: must be in the monitoring profile'],
    ['jaeger in the profile', (c) => delete c.services.jaeger?.profiles, 'jaeger: must be in the monitoring profile'],
    ['postgres in its profile', (c) => delete c.services.postgres?.profiles, 'postgres: must be in the postgres profile'],
    [
      'postgres optional',
      (c) => c.services.api?.depends_on?.postgres && delete c.services.api.depends_on.postgres.required,
      'api: must wait for a healthy postgres',
    ],
    [
      'traces to jaeger',
      (c) => c.services.worker?.environment && delete c.services.worker.environment.SLUICE_TELEMETRY__TRACING__ENDPOINT,
      'worker: traces must go to jaeger:4318',
    ],
  ])('the check fails without: %s', (_name, edit, message) => {
    const errors = broken(edit);
    expect(
      errors.some((e) => e.includes(message)),
      errors.join('\n'),
    ).toBe(true);
  });
});

describe('load balancer (deploy/nginx/nginx.conf)', () => {
  const conf = read('deploy/nginx/nginx.conf');
  const directive = (name: string) => [...conf.matchAll(new RegExp(`^\\s*${name}\\s+([^;]+);`, 'gm'))].map((m) => m[1]?.trim());

  it('balances over every api replica on the API port', () => {
    expect(directive('server')).toContain(`api:${config.server.port} resolve`);
    expect(compose.services.api?.expose).toContain(String(config.server.port));
    expect(directive('proxy_pass')).toEqual(['http://sluice_api']);
    expect(directive('listen')).toEqual(['8080']);
  });

  it('is SSE-friendly: no proxy buffering, hour-long read timeout, HTTP/1.1 keep-alive upstream', () => {
    expect(directive('proxy_buffering')).toEqual(['off']);
    expect(directive('proxy_cache')).toEqual(['off']);
    expect(parseInt(directive('proxy_read_timeout')[0] ?? '0', 10)).toBeGreaterThanOrEqual(3600);
    expect(directive('proxy_http_version')).toEqual(['1.1']);
    expect(directive('proxy_next_upstream')[0]).not.toContain('non_idempotent'); // never replay a POST /v1/dispatch
  });

  it('keeps /metrics, /health and /ready off the published port, as the Ingress does', () => {
    const blocked = /location ~ \^\/\(([^)]+)\)\$ \{\s*return 404;\s*\}/.exec(conf);
    expect(blocked?.[1]?.split('|').sort()).toEqual(['health', 'metrics', 'ready']);
  });

  it('lets Sluice answer oversized bodies itself', () => {
    const limit = parseInt(directive('client_max_body_size')[0] ?? '0', 10) * 1024 * 1024;
    expect(limit).toBeGreaterThan(config.server.max_body_bytes);
  });
});

describe('monitoring (profile `monitoring`)', () => {
  const prometheus = parse(read('deploy/prometheus/prometheus.yml')) as {
    rule_files: string[];
    scrape_configs: { job_name: string; metrics_path?: string; dns_sd_configs?: { names: string[]; port: number }[] }[];
  };

  it("Prometheus loads the chart's alert file, mounted where its rule_files names it", () => {
    const alerts = mounts(compose.services.prometheus ?? {}).find((m) => m.source === './helm/sluice/files/prometheus-alerts.yaml');
    expect(alerts?.target).toBeDefined();
    expect(prometheus.rule_files).toEqual([alerts?.target]);
  });

  it('Prometheus scrapes every API replica and every worker on their metrics ports', () => {
    const target = (service: string) => prometheus.scrape_configs.find((j) => j.dns_sd_configs?.[0]?.names.includes(service));
    expect(target('api')).toMatchObject({ metrics_path: '/metrics', dns_sd_configs: [{ port: config.server.port }] });
    expect(target('worker')).toMatchObject({ metrics_path: '/metrics', dns_sd_configs: [{ port: config.worker.port }] });
    expect(compose.services.worker?.expose).toContain(String(config.worker.port));
  });

  it('Grafana provisions the Prometheus data source and the dashboard folder it is mounted at', () => {
    const ds = parse(read('deploy/grafana/provisioning/datasources/prometheus.yaml')) as { datasources: { uid: string; url: string }[] };
    expect(ds.datasources[0]).toMatchObject({ uid: 'prometheus', url: 'http://prometheus:9090' });
    const provider = parse(read('deploy/grafana/provisioning/dashboards/sluice.yaml')) as { providers: { options: { path: string } }[] };
    const dashMount = mounts(compose.services.grafana ?? {}).find((m) => m.source === './deploy/grafana/dashboards');
    expect(provider.providers[0]?.options.path).toBe(dashMount?.target);
    expect(mounts(compose.services.grafana ?? {}).some((m) => m.source === './deploy/grafana/provisioning' && m.target === '/etc/grafana/provisioning')).toBe(
      true,
    );
  });

  it('the dashboard covers dispatch, latency, providers, breakers, queues and Redis errors', () => {
    const dash = JSON.parse(read('deploy/grafana/dashboards/sluice.json')) as {
      uid: string;
      templating: { list: { name: string }[] };
      panels: { type: string; title: string; datasource?: { uid: string }; targets?: { expr: string }[] }[];
    };
    expect(dash.uid).toBe('sluice-overview');
    expect(dash.templating.list.map((v) => v.name)).toContain('datasource');
    const graphs = dash.panels.filter((p) => p.type !== 'row');
    for (const p of graphs) {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's own variable syntax, not a template literal.
      expect(p.datasource?.uid, p.title).toBe('${datasource}');
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
    }
    const exprs = (title: RegExp) =>
      graphs
        .filter((p) => title.test(p.title))
        .flatMap((p) => (p.targets ?? []).map((t) => t.expr))
        .join('\n');
    expect(exprs(/dispatch rate by outcome/i)).toMatch(/sum by \(outcome\) \(rate\(sluice_actions_total/);
    expect(exprs(/latency percentiles/i)).toMatch(/histogram_quantile\(0\.99, .*sluice_dispatch_duration_seconds_bucket/);
    expect(exprs(/provider health/i)).toContain('sluice_provider_requests_total{result="success"}');
    expect(exprs(/circuit breaker/i)).toContain('sluice_circuit_breaker_state');
    expect(exprs(/queue depths/i)).toContain('sluice_queue_jobs');
    expect(exprs(/redis errors/i)).toContain('sluice_state_errors_total');
    expect(exprs(/audit ingest backlog/i)).toContain('sluice_audit_ingest_backlog');
  });
});
