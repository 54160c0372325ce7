/**
 * `npm run bench -- --interleave`: the selected single-process scenarios (bare Fastify, one
 * `sluice serve` on memory) started side by side and loaded in turn, a short window each, round
 * after round (forward, then backward, so no scenario always runs first). A shared VM's speed
 * drifts over tens of seconds, by more than some targets' budgets; windows a few seconds apart
 * see the same machine, so a pair's ratio holds still where whole runs taken in turn do not.
 * With `--pin` the scenarios' processes share the first CPUs and the load driver (and this
 * runner, with the tracing collector) gets the last one: the scheduler cannot put them on each
 * other's core, the other half of the noise.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';
import { actionsPerRequest } from './action-body.js';
import type { LoadClient } from './load-client.js';
import type { LatencySummary, LoadResult } from './load-protocol.js';
import { DRAIN_MS, measureLoadWindow } from './load-window.js';
import { memory } from './proc-stats.js';
import { lowerMedianBy } from './rounds.js';
import { writeRulesDir } from './rules-fixture.js';
import { sanityCheck } from './sanity-check.js';
import type { ProcessStats, ScenarioResult } from './scenario-result.js';
import type { Scenario, ScenarioId } from './scenarios.js';
import { createSilences } from './silences-fixture.js';
import { startTopology, type Topology } from './topology.js';

export interface InterleaveSettings {
  rounds: number;
  windowS: number;
  warmupS: number;
  pin: boolean;
  /** When set, sluice processes run with --cpu-prof and write profiles under <dir>/<scenario>. */
  cpuProfDir?: string | undefined;
}

/** One scenario's measured window in one round. */
export interface WindowRun {
  id: ScenarioId;
  round: number;
  load: LoadResult;
  /** Its own counter's delta (sluice), or 2xx × actions per request (the baseline). */
  dispatched: number;
  /** Per gateway pid, CPU ms during the window and its drain. */
  cpuMs: Record<number, number>;
  clientCpuMs: number;
  /** The whole machine's busy ms over the window and its drain. */
  busyMs: number;
}

/** A started scenario: what its windows need, and what its report says beside them. */
export interface Prepared {
  scenario: Scenario;
  topology: Topology;
  idleRssMb: Map<number, number>;
  silences: { created: number; setupMs: number } | null;
  cleanup(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Side by side needs one process per scenario and nothing shared: no Redis, no PostgreSQL, no replicas. */
export function interleavable(s: Scenario): boolean {
  return s.replicas === 1 && s.backend !== 'redis' && !s.auditPostgres && !s.soak;
}

/** --cpu-prof into <dir>/<scenario> for a sluice scenario's processes, when profiling. */
function cpuProfArgs(scenario: Scenario, cpuProfDir: string | undefined): string[] {
  if (!cpuProfDir || scenario.server !== 'sluice') return [];
  const profile = join(cpuProfDir, scenario.id);
  mkdirSync(profile, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${profile}`];
}

/** `taskset` every thread of each pid onto the CPUs. */
function pin(pids: readonly number[], cpuList: string): void {
  for (const pid of pids) execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cpuList, String(pid)], { stdio: 'ignore' });
}

/**
 * Starts one single-process scenario in a work directory of its own (with its collector when it
 * traces, extra Node flags for its gateway), reads its idle RSS, creates its silences and checks
 * its outcome; the logs stay when it fails to start. Shared by the interleaved runs and bench:alloc.
 */
export async function prepareScenario(scenario: Scenario, collector: OtlpReceiver | null, nodeArgs: readonly string[] = []): Promise<Prepared> {
  const workDir = mkdtempSync(join(tmpdir(), `sluice-bench-${scenario.id}-`));
  const rulesDir = writeRulesDir(scenario.rules);
  const cleanup = async (topology: Topology | undefined, keepLogs: boolean) => {
    await topology?.stop();
    if (rulesDir) rmSync(rulesDir, { recursive: true, force: true });
    if (!keepLogs) rmSync(workDir, { recursive: true, force: true });
  };
  let topology: Topology | undefined;
  try {
    topology = await startTopology(scenario, {
      workDir,
      rulesDir,
      ...(scenario.tracing && collector ? { tracingEndpoint: collector.url } : {}),
      ...(nodeArgs.length > 0 ? { nodeArgs: [...nodeArgs] } : {}),
    });
    await sleep(1000);
    const idleRssMb = new Map(topology.api.map((p) => [p.pid, memory(p.pid).rssMb]));
    const silences = scenario.silences ? await createSilences(topology.url, scenario.silences) : null;
    await sanityCheck(scenario, topology.url);
    const started = topology;
    return { scenario, topology, idleRssMb, silences, cleanup: () => cleanup(started, false) };
  } catch (err) {
    await cleanup(topology, true);
    throw new Error(`scenario ${scenario.id} failed to start (logs in ${workDir}): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

async function measureWindow(p: Prepared, round: number, durationS: number, load: LoadClient): Promise<WindowRun> {
  const w = await measureLoadWindow(p.scenario, p.topology, load, durationS);
  const cpuMs = Object.fromEntries(p.topology.gateway.map((g) => [g.pid, w.cpuMs.get(g.pid) ?? 0]));
  return { id: p.scenario.id, round, load: w.load, dispatched: w.dispatched, cpuMs, clientCpuMs: w.clientCpuMs, busyMs: w.busyMs };
}

/**
 * One scenario's windows as one result: counts and CPU summed, rates over the summed time. The
 * latencies are those of its window with the median throughput (percentiles do not add up).
 */
export function combineWindows(
  scenario: Scenario,
  windows: readonly WindowRun[],
  topology: { api: readonly { pid: number; role: string }[]; gateway: readonly { pid: number; role: string }[] },
  idleRssMb: ReadonlyMap<number, number>,
  silences: ScenarioResult['silences'],
): ScenarioResult {
  const own = windows.filter((w) => w.id === scenario.id);
  if (own.length === 0) throw new Error(`combineWindows: no windows of scenario ${scenario.id}`);
  const sum = (f: (w: WindowRun) => number) => own.reduce((total, w) => total + f(w), 0);
  const durationS = sum((w) => w.load.durationS);
  const ok = sum((w) => w.load.ok);
  const dispatched = sum((w) => w.dispatched);
  const perRequest = actionsPerRequest(scenario.body);
  const statusCodes: Record<string, number> = {};
  for (const w of own) for (const [code, n] of Object.entries(w.load.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  const cpuOf = (pid: number) => sum((w) => w.cpuMs[pid] ?? 0);
  const gatewayCpuMs = topology.gateway.reduce((total, g) => total + cpuOf(g.pid), 0);
  const apiCpuMs = topology.api.reduce((total, a) => total + cpuOf(a.pid), 0);
  const latencyMs: LatencySummary = lowerMedianBy(own, (w) => w.load.ok / w.load.durationS).load.latency;
  const processes: ProcessStats[] = topology.gateway.map((g) => {
    const mem = memory(g.pid);
    return { role: g.role, pid: g.pid, cpuMs: cpuOf(g.pid), idleRssMb: idleRssMb.get(g.pid) ?? Number.NaN, rssMb: mem.rssMb, peakRssMb: mem.peakRssMb };
  });
  const apiPids = new Set(topology.api.map((a) => a.pid));
  const apiStats = processes.filter((p) => apiPids.has(p.pid));
  return {
    id: scenario.id,
    title: scenario.title,
    connections: scenario.connections,
    durationS,
    requests: ok,
    actionsPerRequest: perRequest,
    reqPerSec: ok / durationS,
    actionsPerSec: (ok * perRequest) / durationS,
    latencyMs,
    failures: { non2xx: sum((w) => w.load.non2xx), errors: sum((w) => w.load.errors), timeouts: sum((w) => w.load.timeouts), statusCodes },
    dispatched,
    cpuMsPerRequest: gatewayCpuMs / Math.max(1, dispatched / perRequest),
    cpuMsPerDispatch: { api: apiCpuMs / Math.max(1, dispatched), worker: null },
    serverCores: gatewayCpuMs / 1000 / durationS,
    clientCores: sum((w) => w.clientCpuMs) / 1000 / durationS,
    otherCores: Math.max(0, sum((w) => w.busyMs) - gatewayCpuMs - sum((w) => w.clientCpuMs)) / 1000 / (durationS + (own.length * DRAIN_MS) / 1000),
    rssMb: Math.max(...apiStats.map((p) => p.rssMb)),
    idleRssMb: Math.max(...apiStats.map((p) => p.idleRssMb)),
    processes,
    redis: null,
    openLoop: null,
    silences,
  };
}

/** Each round's throughput of every scenario as a share of the first scenario's in that round. */
export function roundRatios(windows: readonly WindowRun[], ids: readonly ScenarioId[]): Map<ScenarioId, number[]> {
  const rate = (w: WindowRun) => w.load.ok / w.load.durationS;
  const [first] = ids;
  const out = new Map<ScenarioId, number[]>(ids.map((id) => [id, []]));
  const rounds = [...new Set(windows.map((w) => w.round))].sort((x, y) => x - y);
  for (const round of rounds) {
    const base = windows.find((w) => w.round === round && w.id === first);
    if (!base) continue;
    for (const id of ids) {
      const w = windows.find((x) => x.round === round && x.id === id);
      if (w) out.get(id)?.push(rate(w) / rate(base));
    }
  }
  return out;
}

export interface InterleavedRun {
  results: ScenarioResult[];
  windows: WindowRun[];
  ratios: Map<ScenarioId, number[]>;
}

export async function runInterleaved(scenarios: readonly Scenario[], settings: InterleaveSettings, load: LoadClient): Promise<InterleavedRun> {
  const refused = scenarios.filter((s) => !interleavable(s)).map((s) => s.id);
  if (refused.length > 0) throw new Error(`--interleave runs single-process scenarios without Redis or PostgreSQL; not: ${refused.join(', ')}`);
  const cpuCount = cpus().length;
  if (settings.pin && cpuCount < 2) throw new Error('--pin needs at least 2 CPUs');
  const collector = scenarios.some((s) => s.tracing) ? await startOtlpReceiver({ collect: false }) : null;
  const prepared: Prepared[] = [];
  try {
    for (const scenario of scenarios) {
      console.error(`  (${scenario.id}) ${scenario.title}: starting …`);
      prepared.push(await prepareScenario(scenario, collector, cpuProfArgs(scenario, settings.cpuProfDir)));
    }
    if (settings.pin) {
      pin(
        prepared.flatMap((p) => p.topology.gateway.map((g) => g.pid)),
        cpuCount === 2 ? '0' : `0-${cpuCount - 2}`,
      );
      pin([load.pid, process.pid], String(cpuCount - 1));
    }
    for (const p of prepared) if (settings.warmupS > 0) await measureWindow(p, 0, settings.warmupS, load);
    const windows: WindowRun[] = [];
    for (let round = 1; round <= settings.rounds; round++) {
      const order = round % 2 === 1 ? prepared : [...prepared].reverse();
      for (const p of order) windows.push(await measureWindow(p, round, settings.windowS, load));
    }
    const results = prepared.map((p) => combineWindows(p.scenario, windows, p.topology, p.idleRssMb, p.silences));
    return {
      results,
      windows,
      ratios: roundRatios(
        windows,
        prepared.map((p) => p.scenario.id),
      ),
    };
  } finally {
    // Whatever runs after (soaks, the audit heap) gets the whole machine again.
    if (settings.pin) pin([load.pid, process.pid], `0-${cpuCount - 1}`);
    for (const p of prepared) await p.cleanup();
    await collector?.close();
  }
}
