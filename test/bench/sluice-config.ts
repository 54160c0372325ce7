/**
 * The sluice.yaml of a scenario: defaults everywhere (auth off, audit on, logging info) except
 * the backend, the rules directory, a noop provider named like SAMPLE_ACTION's, and listening
 * on loopback.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { SAMPLE_ACTION } from './action-body.js';

export interface SluiceConfigOptions {
  backend: 'memory' | 'redis';
  redisUrl?: string;
  /** Redis Cluster: its nodes (`host:port`), in place of redisUrl. */
  redisNodes?: readonly string[];
  /** Redis Sentinel, in place of redisUrl: the Sentinels, the primary's name and password, and state.wait_replicas. */
  redisSentinel?: { sentinels: readonly string[]; name: string; password: string; waitReplicas: number };
  rulesDir: string | null;
  /** The worker's health port (`sluice worker` reads it from the config or --port). */
  workerPort?: number;
  /** Tracing on, every trace sampled, spans exported over OTLP/HTTP to this collector. */
  tracingEndpoint?: string;
  /** The audit trail in this PostgreSQL database (audit.backend: postgres). */
  auditPostgresUrl?: string;
}

/**
 * The tracing of the bench's traced scenarios: every trace sampled, OTLP/HTTP to the local
 * collector. (k) writes it into its config; (l), the bare baseline, starts tracing with it as is.
 */
export function benchTracing(endpoint: string) {
  return { enabled: true, exporter: 'otlp-http', endpoint, sample_ratio: 1, headers: {} } as const;
}

export function writeSluiceConfig(dir: string, name: string, opts: SluiceConfigOptions): string {
  const config: Record<string, unknown> = {
    server: { host: '127.0.0.1' },
    state: opts.backend === 'memory' ? { backend: 'memory' } : { backend: 'redis', ...redisState(opts) },
    providers: [{ name: SAMPLE_ACTION.provider, type: 'noop' }],
    ...(opts.rulesDir ? { rules: { directory: opts.rulesDir } } : {}),
    ...(opts.workerPort !== undefined ? { worker: { host: '127.0.0.1', port: opts.workerPort } } : {}),
    ...(opts.tracingEndpoint ? { telemetry: { tracing: benchTracing(opts.tracingEndpoint) } } : {}),
    ...(opts.auditPostgresUrl ? { audit: { backend: 'postgres', postgres: { url: opts.auditPostgresUrl } } } : {}),
  };
  const file = join(dir, name);
  writeFileSync(file, stringify(config));
  return file;
}

function redisState(opts: SluiceConfigOptions): Record<string, unknown> {
  if (opts.redisNodes) return { cluster: { nodes: opts.redisNodes } };
  const sentinel = opts.redisSentinel;
  if (sentinel) return { sentinels: sentinel.sentinels, name: sentinel.name, password: sentinel.password, wait_replicas: sentinel.waitReplicas };
  return { url: opts.redisUrl };
}
