import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { USAGE, parseCliArgs } from '../../../apps/cli/src/args.js';
import { REPO_ROOT } from './helm.js';

/** The parts of a compose service the checks read. */
export interface ComposeService {
  image?: string;
  build?: { context?: string; dockerfile?: string };
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck?: { test?: string[] };
  depends_on?: Record<string, { condition?: string; required?: boolean }>;
  deploy?: { replicas?: number };
  profiles?: string[];
  ports?: string[];
  expose?: string[];
  read_only?: boolean;
  stop_grace_period?: string;
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** docker-compose.yml with YAML merge keys (`<<: *sluice`) resolved, as Compose does. */
export function loadCompose(text = readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8')): ComposeFile {
  return parse(text, { merge: true }) as ComposeFile;
}

/** Compose variable interpolation: ${VAR}, ${VAR:-default}, ${VAR-default}. */
export function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value.replace(/\$\{(\w+)(?:(:?-)([^}]*))?\}/g, (_m, name: string, op: string | undefined, def: string | undefined) => {
    const v = env[name];
    if (op === ':-') return v ? v : (def ?? '');
    if (op === '-') return v ?? def ?? '';
    return v ?? '';
  });
}

export interface Mount {
  source: string;
  target: string;
  readOnly: boolean;
  /** A bind mount of a repository path (./...), as opposed to a named volume. */
  bind: boolean;
}

export function mounts(svc: ComposeService): Mount[] {
  return (svc.volumes ?? []).map((spec) => {
    const [source = '', target = '', mode = ''] = spec.split(':');
    return { source, target, readOnly: mode.split(',').includes('ro'), bind: source.startsWith('./') || source.startsWith('/') };
  });
}

const seconds = (duration: string | undefined) => {
  const m = /^(\d+)s$/.exec(duration ?? '');
  return m ? Number(m[1]) : NaN;
};

/** Everything the issue asks of the compose cluster; returns the problems (empty = fine). */
export function composeErrors(doc: ComposeFile, opts: { shutdownTimeoutSeconds: number }): string[] {
  const errors: string[] = [];
  const services = doc.services ?? {};
  const need = (name: string): ComposeService => {
    const svc = services[name];
    if (!svc) errors.push(`service ${name} missing`);
    return svc ?? {};
  };

  for (const [name, svc] of Object.entries(services)) {
    if (!svc.healthcheck?.test?.length) errors.push(`${name}: healthcheck missing`);
    for (const m of mounts(svc)) {
      if (m.bind && !existsSync(join(REPO_ROOT, m.source))) errors.push(`${name}: mount source ${m.source} does not exist`);
      if (m.bind && !m.readOnly) errors.push(`${name}: bind mount ${m.source} must be read-only (:ro)`);
      if (!m.bind && !(doc.volumes && m.source in doc.volumes)) errors.push(`${name}: named volume ${m.source} is not declared`);
    }
  }

  const redis = need('redis');
  if (!/^redis:|^valkey\//.test(redis.image ?? '')) errors.push('redis: image must be redis');
  if (!(redis.command ?? []).join(' ').includes('--appendonly yes')) errors.push('redis: AOF (--appendonly yes) is off');
  if (!mounts(redis).some((m) => !m.bind && m.target === '/data')) errors.push('redis: no named volume at /data for the AOF');

  const roles = [
    { name: 'api', replicas: 3, command: 'serve', noWorker: true },
    { name: 'worker', replicas: 2, command: 'worker', noWorker: false },
  ];
  for (const role of roles) {
    const svc = need(role.name);
    if (svc.deploy?.replicas !== role.replicas) errors.push(`${role.name}: deploy.replicas must be ${role.replicas}`);
    try {
      const args = parseCliArgs(svc.command ?? []);
      if (args.command !== role.command || args.noWorker !== role.noWorker)
        errors.push(`${role.name}: command must be \`${role.command}${role.noWorker ? ' --no-worker' : ''}\``);
      if (!new RegExp(`^  ${args.command} `, 'm').test(USAGE)) errors.push(`${role.name}: \`${args.command}\` is not a sluice command`);
    } catch (err) {
      errors.push(`${role.name}: command ${JSON.stringify(svc.command)} is not valid for the sluice CLI: ${(err as Error).message}`);
    }
    if (svc.build?.dockerfile !== 'deploy/Dockerfile') errors.push(`${role.name}: must build deploy/Dockerfile`);
    if (svc.depends_on?.redis?.condition !== 'service_healthy') errors.push(`${role.name}: must wait for a healthy redis`);
    const db = svc.depends_on?.postgres;
    if (db?.condition !== 'service_healthy' || db.required !== false)
      errors.push(`${role.name}: must wait for a healthy postgres when its profile runs (required: false)`);
    if (!/@postgres:5432\//.test(svc.environment?.SLUICE_AUDIT__POSTGRES__URL ?? ''))
      errors.push(`${role.name}: SLUICE_AUDIT__POSTGRES__URL must point at the postgres service`);
    if (!/^redis:\/\/redis:6379/.test(svc.environment?.SLUICE_STATE__URL ?? '')) errors.push(`${role.name}: SLUICE_STATE__URL must point at the redis service`);
    if (!svc.environment?.SLUICE_CONFIG) errors.push(`${role.name}: SLUICE_CONFIG missing`);
    if (!('SLUICE_AUTH_KEY' in (svc.environment ?? {}))) errors.push(`${role.name}: SLUICE_AUTH_KEY missing`);
    const targets = mounts(svc).map((m) => m.target);
    for (const t of [svc.environment?.SLUICE_CONFIG, '/etc/sluice/rules', '/etc/sluice/credentials.yaml']) {
      if (t && !targets.includes(t)) errors.push(`${role.name}: nothing mounted at ${t}`);
    }
    if (svc.read_only !== true) errors.push(`${role.name}: read_only root filesystem expected`);
    if (!(seconds(svc.stop_grace_period) > opts.shutdownTimeoutSeconds)) {
      errors.push(`${role.name}: stop_grace_period (${svc.stop_grace_period}) must exceed shutdown_timeout_seconds (${opts.shutdownTimeoutSeconds})`);
    }
  }

  const lb = need('lb');
  if (!/^(nginx|haproxy):/.test(lb.image ?? '')) errors.push('lb: nginx or haproxy expected');
  if (!(lb.ports ?? []).some((p) => /:8080$/.test(p))) errors.push('lb: must publish the API on 8080');
  if (lb.depends_on?.api?.condition !== 'service_healthy') errors.push('lb: must wait for healthy api replicas');
  for (const name of ['prometheus', 'grafana', 'jaeger']) {
    if (!need(name).profiles?.includes('monitoring')) errors.push(`${name}: must be in the monitoring profile`);
  }
  if (!(need('jaeger').expose ?? []).includes('4318')) errors.push('jaeger: must accept OTLP/HTTP on 4318');
  const postgres = need('postgres');
  if (!postgres.profiles?.includes('postgres')) errors.push('postgres: must be in the postgres profile');
  if (!postgres.healthcheck) errors.push('postgres: healthcheck missing');
  for (const role of ['api', 'worker']) {
    if (need(role).environment?.SLUICE_TELEMETRY__TRACING__ENDPOINT !== 'http://jaeger:4318') errors.push(`${role}: traces must go to jaeger:4318`);
  }
  return errors;
}
