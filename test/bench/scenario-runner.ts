/**
 * Runs one scenario end to end: private Redis (Redis scenarios), rules directory, processes,
 * idle RSS, silences (created over HTTP), sanity check, warm-up, the measured run (CPU, RSS and
 * Redis counters snapshotted around it), the Redis probe, the dedup memory measurement; then
 * stops everything it started.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';
import { startPostgresServer, type RunningPostgres } from '../support/postgres-server.js';
import { startRedisCluster, type RunningRedisCluster } from '../support/redis-cluster.js';
import { startRedisSentinel, type RunningRedisSentinel } from '../support/redis-sentinel.js';
import { startRedisServer, type RunningRedis } from '../support/redis-server.js';
import { actionsPerRequest } from './action-body.js';
import type { LoadClient } from './load-client.js';
import { DRAIN_MS, measureLoadWindow } from './load-window.js';
import { memory } from './proc-stats.js';
import { probeRedisTraffic } from './redis-probe.js';
import { RedisStats, type RedisDelta } from './redis-stats.js';
import { writeRulesDir } from './rules-fixture.js';
import { sanityCheck } from './sanity-check.js';
import { createSilences } from './silences-fixture.js';
import type { ProcessStats, RedisResult, ScenarioResult } from './scenario-result.js';
import { openLoopRate, type Scenario } from './scenarios.js';
import { startTopology } from './topology.js';

export interface RunSettings {
  durationS: number;
  warmupS: number;
  /** Serial dispatches of the Redis probe (0: no probe). */
  probeDispatches: number;
  /** When set, gateway processes run with --cpu-prof and write profiles under <dir>/<scenario>. */
  cpuProfDir?: string;
  /** Pause after start-up before reading idle RSS. */
  settleMs?: number;
}

/** The state key prefix (sluice's default) and the dedup keys under it (libs/state/src/keys.ts). */
const DEDUP_PATTERN = 'sluice:dedup:*';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runScenario(scenario: Scenario, settings: RunSettings, load: LoadClient): Promise<ScenarioResult> {
  const workDir = mkdtempSync(join(tmpdir(), `sluice-bench-${scenario.id}-`));
  const rulesDir = writeRulesDir(scenario.rules);
  let redis: RunningRedis | undefined;
  let redisCluster: RunningRedisCluster | undefined;
  let redisSentinel: RunningRedisSentinel | undefined;
  /** One per Redis server: the redis-server, or each primary of the Cluster. */
  let stats: RedisStats[] = [];
  let keepWorkDir = true;
  let collector: OtlpReceiver | undefined;
  let postgres: RunningPostgres | undefined;
  try {
    if (scenario.backend === 'redis' && scenario.redisCluster) {
      redisCluster = await startRedisCluster();
      stats = await Promise.all(redisCluster.servers.map((s) => RedisStats.connect(s.url)));
    } else if (scenario.backend === 'redis' && scenario.redisSentinel) {
      redisSentinel = await startRedisSentinel();
      const primary = redisSentinel.servers[0] as RunningRedis;
      stats = [await RedisStats.connect(`redis://:${redisSentinel.password}@127.0.0.1:${primary.port}`)];
    } else if (scenario.backend === 'redis') {
      redis = await startRedisServer();
      stats = [await RedisStats.connect(redis.url)];
    }
    let nodeArgs: string[] | undefined;
    if (settings.cpuProfDir && scenario.server === 'sluice') {
      const dir = join(settings.cpuProfDir, scenario.id);
      mkdirSync(dir, { recursive: true });
      nodeArgs = ['--cpu-prof', `--cpu-prof-dir=${dir}`];
    }
    collector = scenario.tracing ? await startOtlpReceiver({ collect: false }) : undefined;
    postgres = scenario.auditPostgres ? await startPostgresServer() : undefined;
    const auditPostgresUrl = await postgres?.createDatabase('bench');
    const topology = await startTopology(scenario, {
      workDir,
      redisUrl: redis?.url,
      redisNodes: redisCluster?.nodes,
      redisSentinel:
        redisSentinel && scenario.redisSentinel
          ? {
              sentinels: redisSentinel.sentinels,
              name: redisSentinel.name,
              password: redisSentinel.password,
              waitReplicas: scenario.redisSentinel.waitReplicas,
            }
          : undefined,
      rulesDir,
      nodeArgs,
      tracingEndpoint: collector?.url,
      auditPostgresUrl,
    });
    let result: ScenarioResult;
    try {
      await sleep(settings.settleMs ?? 1000);
      const idle = new Map([...topology.gateway, ...(topology.balancer ? [topology.balancer] : [])].map((p) => [p.pid, memory(p.pid).rssMb]));
      const silences = scenario.silences ? await createSilences(topology.url, scenario.silences) : null;
      await sanityCheck(scenario, topology.url);
      const loadOptions = { url: topology.url, path: scenario.path, body: scenario.body, connections: scenario.connections };
      if (settings.warmupS > 0) await load.run({ ...loadOptions, durationS: settings.warmupS });
      await sleep(DRAIN_MS);

      const measured = [...topology.gateway, ...(topology.balancer ? [topology.balancer] : [])];
      let redisBefore: Awaited<ReturnType<RedisStats['snapshot']>>[] = [];
      let redisAfter: typeof redisBefore = [];
      const snapshot = () => Promise.all(stats.map((s) => s.snapshot()));
      const window = await measureLoadWindow(scenario, topology, load, settings.durationS, {
        before: async () => {
          redisBefore = await snapshot();
        },
        after: async () => {
          redisAfter = await snapshot();
        },
      });
      const { load: run, dispatched, clientCpuMs, busyMs, cpuMs: cpuUsed } = window;
      const perServer = redisAfter.map((after, n) => RedisStats.delta(after, redisBefore[n] as (typeof redisBefore)[number]));
      const redisDelta = perServer.length === 0 ? undefined : RedisStats.sum(perServer);
      const perRequest = actionsPerRequest(scenario.body);
      // Latency at a load the server carries: the closed loop's p99 is throughput-bound (performance.md).
      const openLoop =
        scenario.openLoop && run.ok > 0
          ? await load.runOpenLoop({
              ...loadOptions,
              durationS: settings.durationS,
              ratePerSec: openLoopRate(run),
            })
          : null;

      const processes: ProcessStats[] = measured.map((p) => {
        const mem = memory(p.pid);
        return {
          role: p.role,
          pid: p.pid,
          cpuMs: cpuUsed.get(p.pid) ?? 0,
          idleRssMb: idle.get(p.pid) ?? Number.NaN,
          rssMb: mem.rssMb,
          peakRssMb: mem.peakRssMb,
        };
      });
      const gatewayCpuMs = topology.gateway.reduce((sum, p) => sum + (cpuUsed.get(p.pid) ?? 0), 0);
      const apiStats = processes.filter((p) => topology.api.some((a) => a.pid === p.pid));
      const workerStats = processes.filter((p) => topology.gateway.some((g) => g.pid === p.pid) && !topology.api.some((a) => a.pid === p.pid));
      const perDispatch = (list: readonly ProcessStats[]) => list.reduce((sum, p) => sum + p.cpuMs, 0) / Math.max(1, dispatched);
      result = {
        id: scenario.id,
        title: scenario.title,
        connections: scenario.connections,
        durationS: run.durationS,
        requests: run.ok,
        actionsPerRequest: perRequest,
        reqPerSec: run.ok / run.durationS,
        actionsPerSec: (run.ok * perRequest) / run.durationS,
        latencyMs: run.latency,
        failures: { non2xx: run.non2xx, errors: run.errors, timeouts: run.timeouts, statusCodes: run.statusCodes },
        dispatched,
        cpuMsPerRequest: gatewayCpuMs / Math.max(1, dispatched / perRequest),
        cpuMsPerDispatch: { api: perDispatch(apiStats), worker: workerStats.length === 0 ? null : perDispatch(workerStats) },
        serverCores: gatewayCpuMs / 1000 / run.durationS,
        clientCores: clientCpuMs / 1000 / run.durationS,
        // Everything the machine did besides this scenario's processes (includes this runner, ~0).
        otherCores:
          Math.max(0, busyMs - [...cpuUsed.values()].reduce((a, b) => a + b, 0) - (redisDelta?.cpuMs ?? 0)) / 1000 / (run.durationS + DRAIN_MS / 1000),
        rssMb: Math.max(...apiStats.map((p) => p.rssMb)),
        idleRssMb: Math.max(...apiStats.map((p) => p.idleRssMb)),
        processes,
        redis: redisDelta ? redisResult(redisDelta, dispatched, redisCluster ? perServer : null) : null,
        openLoop,
        silences,
      };
    } finally {
      await topology.stop();
    }
    // The probe and the dedup memory read one redis-server (a counting proxy, a database to copy into).
    if (result.redis && redis && settings.probeDispatches > 0) {
      result.redis.probe = await probeRedisTraffic(scenario, { workDir, redisPort: redis.port, rulesDir, dispatches: settings.probeDispatches });
    }
    const [single] = stats;
    if (result.redis && redis && single && scenario.rules === 'dedup') {
      result.redis.dedupMemory = await single.dedupMemory(DEDUP_PATTERN);
    }
    keepWorkDir = false;
    return result;
  } catch (err) {
    throw new Error(`scenario ${scenario.id} failed (logs kept in ${workDir}): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  } finally {
    await Promise.all(stats.map((s) => s.close()));
    await redis?.stop();
    await redisCluster?.stop();
    await redisSentinel?.stop();
    await collector?.close();
    await postgres?.stop();
    if (rulesDir) rmSync(rulesDir, { recursive: true, force: true });
    if (!keepWorkDir) rmSync(workDir, { recursive: true, force: true });
  }
}

function redisResult(d: RedisDelta, dispatches: number, perPrimary: readonly RedisDelta[] | null): RedisResult {
  const per = (n: number) => n / Math.max(1, dispatches);
  const perEach = (counts: Record<string, number>) => Object.fromEntries(Object.entries(counts).map(([name, n]) => [name, per(n)]));
  return {
    primaryCpuMsPerDispatch: perPrimary === null ? null : perPrimary.map((p) => per(p.cpuMs)),
    commandsPerDispatch: per(d.commands),
    byCommandPerDispatch: perEach(d.byCommand),
    commandUsecPerDispatch: perEach(d.usecByCommand),
    readsPerDispatch: per(d.readsProcessed),
    netInputBytesPerDispatch: per(d.netInputBytes),
    cpuMsPerDispatch: per(d.cpuMs),
    usedMemoryBytesPerDispatch: per(d.usedMemoryBytes),
    probe: null,
    dedupMemory: null,
  };
}
