import { mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort } from '../../support/free-port.js';
import { spawnSluice, type SluiceProcess } from '../../support/sluice-process.js';
import type { Json } from './chart.js';
import { interpolate, mounts, type ComposeService } from './compose.js';
import { REPO_ROOT, type K8sObject } from './helm.js';

/**
 * What a container would run: the image entrypoint (`sluice`) plus these args, this environment
 * and these read-only mounts. Read out of the compose file or a rendered Deployment, then run
 * here as a child process: mounts become a private directory tree, container paths in args, env
 * and mounted files are rewritten to it, the container port to a free port.
 */
export interface ContainerSpec {
  name: string;
  args: string[];
  env: Record<string, string>;
  /** Container path → file content, or directory (file name → content). */
  mounts: Record<string, string | Record<string, string>>;
  containerPort: number;
  readyPath: string;
}

export interface RunningContainer {
  spec: ContainerSpec;
  proc: SluiceProcess;
  port: number;
  /** A container path mapped into the private tree. */
  hostPath(containerPath: string): string;
}

/** Starts the container's command with `--port <free> --host 127.0.0.1` and waits for readiness. */
export async function runContainer(spec: ContainerSpec, redisUrl: string): Promise<RunningContainer> {
  const root = mkdtempSync(join(tmpdir(), `sluice-${spec.name}-`));
  // One pass over every mount path (longest first), each occurrence rewritten exactly once.
  const targets = Object.keys(spec.mounts).sort((a, b) => b.length - a.length);
  const pattern = new RegExp(`(?<![\\w./-])(?:${targets.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'g');
  const rewrite = (s: string) => (targets.length === 0 ? s : s.replace(pattern, (t) => join(root, t)));
  for (const [target, content] of Object.entries(spec.mounts)) {
    if (typeof content === 'string') {
      mkdirSync(dirname(join(root, target)), { recursive: true });
      writeFileSync(join(root, target), rewrite(content));
    } else {
      mkdirSync(join(root, target), { recursive: true });
      for (const [file, text] of Object.entries(content)) writeFileSync(join(root, target, file), rewrite(text));
    }
  }
  const env = Object.fromEntries(Object.entries(spec.env).map(([k, v]) => [k, rewrite(v)]));
  if (env.SLUICE_STATE__URL) env.SLUICE_STATE__URL = pointAt(env.SLUICE_STATE__URL, redisUrl);
  const port = await freePort();
  const proc = await spawnSluice([...spec.args.map(rewrite), '--port', String(port), '--host', '127.0.0.1'], { port, env, waitFor: spec.readyPath });
  return { spec, proc, port, hostPath: (p) => rewrite(p) };
}

/** The container's Redis URL (scheme, credentials, db) with the host and port of the test Redis. */
function pointAt(url: string, redisUrl: string): string {
  const u = new URL(url);
  const local = new URL(redisUrl);
  u.hostname = local.hostname;
  u.port = local.port;
  return u.toString();
}

const readTree = (path: string): string | Record<string, string> =>
  statSync(path).isDirectory() ? Object.fromEntries(readdirSync(path).map((f) => [f, readFileSync(join(path, f), 'utf8')])) : readFileSync(path, 'utf8');

/** A compose service's container: `command`, `environment` (interpolated) and its bind mounts. */
export function composeContainer(name: string, svc: ComposeService, hostEnv: Record<string, string> = {}): ContainerSpec {
  const env = Object.fromEntries(Object.entries(svc.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), hostEnv)]));
  const check = healthcheckUrl(svc);
  return {
    name,
    args: svc.command ?? [],
    env,
    mounts: Object.fromEntries(
      mounts(svc)
        .filter((m) => m.bind)
        .map((m) => [m.target, readTree(join(REPO_ROOT, m.source))]),
    ),
    containerPort: Number(svc.expose?.[0]),
    readyPath: check.pathname,
  };
}

/** The URL a compose healthcheck (`node /app/deploy/healthcheck.mjs URL`) probes. */
export function healthcheckUrl(svc: ComposeService): URL {
  const url = (svc.healthcheck?.test ?? []).find((a) => /^https?:\/\//.test(a));
  if (!url) throw new Error('healthcheck has no URL');
  return new URL(url);
}

/** A rendered Deployment's container, with ConfigMaps and Secrets resolved like the kubelet does. */
export function chartContainer(docs: readonly K8sObject[], deployment: Json, externalSecrets: Record<string, Record<string, string>>): ContainerSpec {
  const pod = deployment.spec.template.spec;
  const c = pod.containers[0];
  const configMap = (name: string): Record<string, string> => {
    const cm = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === name) as Json | undefined;
    if (!cm) throw new Error(`ConfigMap ${name} not rendered`);
    return cm.data ?? {};
  };
  const secret = (name: string): Record<string, string> | undefined => {
    const s = docs.find((d) => d.kind === 'Secret' && d.metadata.name === name) as Json | undefined;
    if (s) return Object.fromEntries(Object.entries((s.data ?? {}) as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    return externalSecrets[name];
  };
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    if (typeof e.value === 'string') env[e.name] = e.value.replace(/\$\((\w+)\)/g, (m: string, v: string) => env[v] ?? m);
    else if (e.valueFrom?.secretKeyRef) {
      const { name, key, optional } = e.valueFrom.secretKeyRef;
      const value = secret(name)?.[key];
      if (value !== undefined) env[e.name] = value;
      else if (!optional) throw new Error(`env ${e.name}: Secret ${name} has no key ${key}`);
    } else throw new Error(`env ${e.name}: unsupported source`);
  }
  const volumeMounts: Record<string, string | Record<string, string>> = {};
  for (const m of c.volumeMounts ?? []) {
    const v = pod.volumes.find((x: Json) => x.name === m.name);
    let data: Record<string, string> | undefined;
    if (v.configMap) data = configMap(v.configMap.name);
    else if (v.secret) data = secret(v.secret.secretName) ?? (v.secret.optional ? {} : undefined);
    else if (v.emptyDir) continue;
    if (!data) throw new Error(`volume ${m.name}: cannot resolve`);
    if (v.secret?.items) data = Object.fromEntries(v.secret.items.filter((i: Json) => i.key in data!).map((i: Json) => [i.path, data![i.key]]));
    volumeMounts[m.mountPath] = m.subPath ? (data[m.subPath] ?? '') : data;
  }
  const portName = c.readinessProbe.httpGet.port;
  return {
    name: c.name,
    args: c.args,
    env,
    mounts: volumeMounts,
    containerPort: c.ports.find((p: Json) => p.name === portName).containerPort,
    readyPath: c.readinessProbe.httpGet.path,
  };
}

/** Turns on AUTH for the test Redis (the chart's path with a password from a Secret). */
export function setRedisPassword(redisPort: number, password: string): Promise<void> {
  const arg = (s: string) => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;
  return new Promise((resolve, reject) => {
    const sock = createConnection({ port: redisPort, host: '127.0.0.1' }, () =>
      sock.write(`*4\r\n${arg('CONFIG')}${arg('SET')}${arg('requirepass')}${arg(password)}`),
    );
    sock.once('data', (reply) => {
      sock.end();
      if (reply.toString().startsWith('+OK')) resolve();
      else reject(new Error(`CONFIG SET requirepass: ${reply.toString()}`));
    });
    sock.once('error', reject);
  });
}
