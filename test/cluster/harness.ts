import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort } from '../support/free-port.js';
import { startRedisCluster, type RunningRedisCluster } from '../support/redis-cluster.js';
import { startRedisSentinel, type RunningRedisSentinel } from '../support/redis-sentinel.js';
import { startRedisServer, type RunningRedis } from '../support/redis-server.js';
import { spawnSluice, type SluiceProcess } from '../support/sluice-process.js';

export interface ClusterOptions {
  apis: number;
  workers: number;
  /** Extra sluice.yaml content; state is always the cluster's own Redis. */
  config?: Record<string, unknown>;
  /** Extra environment of the worker processes (the APIs get the test default). */
  workerEnv?: Record<string, string>;
  /** The shared state: one redis-server (default), a 3-primary Redis Cluster, or a primary and replica behind Sentinels. */
  redis?: 'single' | 'cluster' | 'sentinel';
  /** Redis Cluster: replicas per primary (default 0; failover tests want 1). */
  redisReplicas?: number;
}

/** How the cluster tests name the two Redis deployments they run on. */
export const REDIS_DEPLOYMENTS = ['single', 'cluster'] as const;

/**
 * A real cluster on one machine: a private redis-server (or Redis Cluster), N `sluice serve
 * --no-worker` and M `sluice worker` child processes sharing it, and round-robin HTTP over the
 * APIs. Any process can be SIGKILLed mid-test.
 */
export class Cluster {
  private cursor = 0;

  private constructor(
    private readonly state: SharedState,
    readonly configFile: string,
    readonly apis: SluiceProcess[],
    readonly workers: SluiceProcess[],
  ) {}

  static async start(opts: ClusterOptions): Promise<Cluster> {
    const state = await startSharedState(opts.redis ?? 'single', opts.redisReplicas ?? 0);
    const config = {
      ...opts.config,
      state: { ...(opts.config?.state as object | undefined), backend: 'redis', ...stateConfig(state), prefix: 'sluice-cluster' },
      worker: { lock_duration_ms: 2000, stalled_interval_ms: 1000, ...(opts.config?.worker as object | undefined) },
      server: { shutdown_timeout_seconds: 10, ...(opts.config?.server as object | undefined) },
    };
    const configFile = join(mkdtempSync(join(tmpdir(), 'sluice-cluster-')), 'sluice.yaml');
    writeFileSync(configFile, stringify(config));
    const spawnOne = async (role: 'api' | 'worker'): Promise<SluiceProcess> => {
      const args = role === 'api' ? ['serve', '--no-worker', '--config', configFile] : ['worker', '--config', configFile];
      const env = role === 'worker' ? opts.workerEnv : undefined;
      for (let attempt = 1; ; attempt++) {
        const port = await freePort();
        try {
          return await spawnSluice([...args, '--port', String(port), '--host', '127.0.0.1'], { port, ...(env ? { env } : {}) });
        } catch (err) {
          // The free port was taken by another test's process between asking and listening: ask again.
          if (attempt >= 3 || !(err instanceof Error && err.message.includes('EADDRINUSE'))) throw err;
        }
      }
    };
    try {
      const apis = await Promise.all(Array.from({ length: opts.apis }, () => spawnOne('api')));
      const workers = await Promise.all(Array.from({ length: opts.workers }, () => spawnOne('worker')));
      return new Cluster(state, configFile, apis, workers);
    } catch (err) {
      await stopSharedState(state);
      throw err;
    }
  }

  /** The single redis-server (tests that read Redis directly run on that deployment only). */
  get redis(): RunningRedis {
    if (!('single' in this.state)) throw new Error('this cluster runs on a Redis Cluster or behind Sentinels');
    return this.state.single;
  }

  /** The Redis Cluster, for tests that kill or move its nodes. */
  get redisCluster(): RunningRedisCluster {
    if (!('sharded' in this.state)) throw new Error('this cluster does not run on a Redis Cluster');
    return this.state.sharded;
  }

  /** The Sentinel set, for tests that kill its primary. */
  get sentinel(): RunningRedisSentinel {
    if (!('replicated' in this.state)) throw new Error('this cluster does not run behind Sentinels');
    return this.state.replicated;
  }

  /** The next API replica in round-robin order (including dead ones: callers see real failures). */
  nextApi(): SluiceProcess {
    const api = this.apis[this.cursor++ % this.apis.length];
    if (!api) throw new Error('cluster has no API replicas');
    return api;
  }

  async stop(): Promise<void> {
    const all = [...this.apis, ...this.workers];
    for (const p of all) p.kill('SIGTERM');
    await Promise.all(all.map((p) => Promise.race([p.exited, new Promise((r) => setTimeout(r, 8000)).then(() => p.kill('SIGKILL'))])));
    if (!('sharded' in this.state)) {
      await stopSharedState(this.state);
      return;
    }
    const errors = await this.state.sharded.errorCounts();
    await this.state.sharded.stop();
    // Every command of the run stayed within one slot.
    if ((errors.CROSSSLOT ?? 0) > 0) throw new Error(`the Redis Cluster answered CROSSSLOT ${errors.CROSSSLOT} times`);
  }
}

type SharedState = { single: RunningRedis } | { sharded: RunningRedisCluster } | { replicated: RunningRedisSentinel };

async function startSharedState(kind: 'single' | 'cluster' | 'sentinel', replicas: number): Promise<SharedState> {
  if (kind === 'cluster') return { sharded: await startRedisCluster({ replicas }) };
  if (kind === 'sentinel') return { replicated: await startRedisSentinel() };
  return { single: await startRedisServer() };
}

function stateConfig(state: SharedState): Record<string, unknown> {
  if ('sharded' in state) return { cluster: { nodes: state.sharded.nodes } };
  if ('replicated' in state) return { sentinels: state.replicated.sentinels, name: state.replicated.name, password: state.replicated.password };
  return { url: state.single.url };
}

function stopSharedState(state: SharedState): Promise<void> {
  if ('sharded' in state) return state.sharded.stop();
  if ('replicated' in state) return state.replicated.stop();
  return state.single.stop();
}
