/**
 * The processes of one scenario: the baseline server; or one `sluice serve`; or (2 replicas)
 * `sluice serve --no-worker` ×2 + `sluice worker` + the round-robin proxy in front.
 */
import { join } from 'node:path';
import { freePort } from '../support/free-port.js';
import { launchBenchScript, launchSluice, type Launched } from './process-launcher.js';
import type { Scenario } from './scenarios.js';
import { writeSluiceConfig, type SluiceConfigOptions } from './sluice-config.js';

export interface Topology {
  /** Where the load goes. */
  url: string;
  /** Processes serving the API (RSS is reported for these). */
  api: Launched[];
  /** Every gateway process (API + worker): CPU per request is their sum. */
  gateway: Launched[];
  /** The load balancer, when there is one (reported, not counted as gateway CPU). */
  balancer: Launched | null;
  stop(): Promise<void>;
}

export interface TopologyOptions {
  workDir: string;
  redisUrl?: string;
  /** Redis Cluster scenarios: the cluster's nodes, in place of redisUrl. */
  redisNodes?: readonly string[];
  /** Redis Sentinel scenarios, in place of redisUrl. */
  redisSentinel?: SluiceConfigOptions['redisSentinel'];
  rulesDir: string | null;
  /** Extra Node flags for gateway processes (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** The collector of a tracing scenario. */
  tracingEndpoint?: string | undefined;
  /** The audit database of a PostgreSQL-trail scenario. */
  auditPostgresUrl?: string | undefined;
}

export async function startTopology(scenario: Scenario, opts: TopologyOptions): Promise<Topology> {
  const started: Launched[] = [];
  const stopAll = async () => {
    // Front to back: the balancer first, the worker last.
    for (const p of [...started].reverse()) await p.stop();
  };
  const log = (role: string) => join(opts.workDir, `${role}.log`);
  try {
    if (scenario.server === 'baseline') {
      const port = await freePort();
      const work = scenario.baselineWorkUs ? ['--work-us', String(scenario.baselineWorkUs)] : [];
      const traced = scenario.tracing && opts.tracingEndpoint ? ['--tracing-endpoint', opts.tracingEndpoint] : [];
      const args = ['--port', String(port), ...work, ...traced];
      const base = await launchBenchScript({ role: 'baseline', file: 'baseline-server.ts', args, port, logFile: log('baseline') });
      started.push(base);
      return { url: base.url, api: [base], gateway: [base], balancer: null, stop: stopAll };
    }
    const backend = scenario.backend ?? 'memory';
    const tracing = {
      ...(opts.tracingEndpoint ? { tracingEndpoint: opts.tracingEndpoint } : {}),
      ...(opts.auditPostgresUrl ? { auditPostgresUrl: opts.auditPostgresUrl } : {}),
    };
    // On Redis the API replicas run without a worker and one `sluice worker` does the background
    // work (the audit indexer among it), so its CPU is reported apart from the API's.
    let worker: Launched | null = null;
    let workerPort: number | undefined;
    if (backend === 'redis') {
      workerPort = await freePort();
      const workerConfig = writeSluiceConfig(opts.workDir, 'worker.yaml', {
        backend,
        redisUrl: opts.redisUrl,
        redisNodes: opts.redisNodes,
        redisSentinel: opts.redisSentinel,
        rulesDir: opts.rulesDir,
        workerPort,
        ...tracing,
      });
      worker = await launchSluice({
        role: 'worker',
        command: 'worker',
        configFile: workerConfig,
        port: workerPort,
        logFile: log('worker'),
        nodeArgs: opts.nodeArgs,
      });
      started.push(worker);
    }
    const workers = worker === null ? [] : [worker];
    const config = writeSluiceConfig(opts.workDir, 'sluice.yaml', {
      backend,
      redisUrl: opts.redisUrl,
      redisNodes: opts.redisNodes,
      redisSentinel: opts.redisSentinel,
      rulesDir: opts.rulesDir,
      ...tracing,
    });
    if (scenario.replicas === 1) {
      const port = await freePort();
      const noWorker = worker !== null;
      const serve = await launchSluice({ role: 'serve', command: 'serve', noWorker, configFile: config, port, logFile: log('serve'), nodeArgs: opts.nodeArgs });
      started.push(serve);
      return { url: serve.url, api: [serve], gateway: [serve, ...workers], balancer: null, stop: stopAll };
    }
    const api: Launched[] = [];
    for (const n of [1, 2]) {
      const port = await freePort();
      const replica = await launchSluice({
        role: `api-${n}`,
        command: 'serve',
        noWorker: true,
        configFile: config,
        port,
        logFile: log(`api-${n}`),
        nodeArgs: opts.nodeArgs,
      });
      started.push(replica);
      api.push(replica);
    }
    const lbPort = await freePort();
    const balancer = await launchBenchScript({
      role: 'rr-proxy',
      file: 'rr-proxy.ts',
      args: ['--port', String(lbPort), ...api.flatMap((a) => ['--upstream', a.url])],
      port: lbPort,
      logFile: log('rr-proxy'),
    });
    started.push(balancer);
    return { url: balancer.url, api, gateway: [...api, ...workers], balancer, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
