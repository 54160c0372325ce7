/**
 * `npm run bench [-- options]`: runs the scenarios of issue 7, the silence pair (i, j), the tracing
 * scenario (k) and its floor (l, the same spans on bare Fastify), the PostgreSQL audit trail (p),
 * the soaks (s, t, soak.ts) and the heap per retained audit record (m, audit-heap.ts) against
 * the built CLI (the `prebench` script builds it), prints a Markdown table with each scenario's
 * ratio to the bare-Fastify baseline (measured in the same run) and the targets, and writes
 * .bench-results/bench.json.
 *
 * Scenarios (b) and (e) then run an open loop at half their throughput (open-loop.ts) for the
 * latency at a load the server carries. (x), the calibration, is the baseline spinning a fixed
 * CPU time per request, open loop included: what the machine makes of added work alone.
 *
 * Options:
 *   --quick            3 s per scenario after a 1 s warm-up (default: 10 s after 2 s)
 *   --duration S       measured seconds per scenario
 *   --warmup S         warm-up seconds per scenario
 *   --only a,b,e       run these scenarios only (ratios need a; the silence target needs i and j)
 *   --soak S           seconds of each soak scenario, (s) memory and (t) Redis (default 180, --quick 20);
 *                      RSS and heap are sampled every 2 s (--quick 1)
 *   --probe N          serial dispatches of the Redis probe (default 300, --quick 100; 0: none)
 *   --cpu-prof         gateway processes run with --cpu-prof; profiles in .bench-results/profiles/<scenario>/
 *   --out FILE         JSON output (default .bench-results/bench.json)
 *   --quiet-wait S     before each scenario, wait up to S seconds (default 120, --quick 0) for the
 *                      machine to be idle (≤ 0.2 busy cores): other work would land in the numbers
 *   --retries N        re-run a scenario up to N times (default 3, --quick 0) while other processes
 *                      used more than 0.25 cores during it; the least disturbed attempt is kept
 *   --rounds N         run the (non-soak) scenarios N times in turn (default 1); each is reported
 *                      by its median run by throughput, every run kept in the JSON (rounds.ts)
 *   --interleave       start the selected scenarios side by side (single-process ones: a, x, b, c, d, g,
 *                      i, j, k, l) and load them in turn, --window seconds each, for --rounds rounds
 *                      (default 8, --quick 2); each reported by its windows' sums (interleave.ts)
 *   --window S         seconds of each interleaved window (default 3, --quick 1)
 *   --pin              with --interleave: the servers on the first CPUs, the load driver on the last
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { measureAuditHeap, type AuditHeapResult } from './audit-heap.js';
import { runInterleaved, type InterleavedRun } from './interleave.js';
import { LoadClient } from './load-client.js';
import { REPO_ROOT } from './process-launcher.js';
import {
  auditHeapLine,
  detailsTable,
  machineInfo,
  openLoopTable,
  redisCommandsTable,
  resultsTable,
  roundRatiosTable,
  soakTable,
  targetsTable,
  writeJson,
} from './report.js';
import { runSoak, type SoakResult, type SoakSettings } from './soak.js';
import { medianRuns } from './rounds.js';
import type { ScenarioResult } from './scenario-result.js';
import { runScenario, type RunSettings } from './scenario-runner.js';
import { OPEN_LOOP_SHARE, SCENARIO_IDS, scenarioTable, type Scenario, type ScenarioId } from './scenarios.js';
import { waitForQuiet } from './quiet-machine.js';
import { checkTargets } from './targets.js';

/** Busy cores below which the machine counts as idle (this runner and the kernel's background). */
const QUIET_CORES = 0.2;
/** Other processes using more than this during a scenario disturb it enough to measure again. */
const DISTURBED_CORES = 0.25;
/** Records (m) measures, after its warm-up ones. */
const AUDIT_HEAP_RECORDS = 30_000;
const AUDIT_HEAP_RECORDS_QUICK = 5_000;

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number, got ${raw}`);
  return n;
}

function parseOnly(raw: string | undefined): ScenarioId[] {
  if (raw === undefined) return [...SCENARIO_IDS];
  const ids = raw.split(',').map((s) => s.trim().toLowerCase());
  const known = new Set<string>(SCENARIO_IDS);
  const bad = ids.filter((id) => !known.has(id));
  if (bad.length) throw new Error(`--only: unknown scenario(s) ${bad.join(', ')} (known: ${SCENARIO_IDS.join(', ')})`);
  return ids as ScenarioId[];
}

/** Runs a scenario, again (up to `retries` times) while other processes disturbed it; the least disturbed attempt. */
async function runLeastDisturbed(
  scenario: Scenario,
  settings: RunSettings,
  load: LoadClient,
  opts: { retries: number; quietWaitS: number },
): Promise<ScenarioResult> {
  let best: ScenarioResult | undefined;
  for (let attempt = 0; attempt <= opts.retries && (best === undefined || best.otherCores > DISTURBED_CORES); attempt++) {
    let waited = false;
    const quiet = await waitForQuiet(QUIET_CORES, opts.quietWaitS, (cores) => {
      if (!waited) console.error(`  waiting for the machine to go quiet (${cores.toFixed(2)} cores busy) …`);
      waited = true;
    });
    if (!quiet) console.error(`  the machine stayed busy for ${opts.quietWaitS} s; measuring anyway (see "other cores")`);
    console.error(`  (${scenario.id}) ${scenario.title}${attempt > 0 ? ` — attempt ${attempt + 1}, the last one was disturbed` : ''} …`);
    const r = await runScenario(scenario, settings, load);
    const failed = r.failures.non2xx + r.failures.errors + r.failures.timeouts;
    if (r.silences) console.error(`      set-up: ${r.silences.created} silences created in ${(r.silences.setupMs / 1000).toFixed(1)} s`);
    console.error(
      `      ${Math.round(r.reqPerSec)} req/s, p99 ${r.latencyMs.p99.toFixed(2)} ms, other load ${r.otherCores.toFixed(2)} cores` +
        `${failed ? `, ${failed} FAILED requests ${JSON.stringify(r.failures.statusCodes)}` : ''}`,
    );
    if (r.openLoop) {
      const o = r.openLoop;
      console.error(
        `      open loop at ${o.offeredPerSec} req/s: p50 ${o.latency.p50.toFixed(2)} ms, p99 ${o.latency.p99.toFixed(2)} ms` +
          `${o.failed + o.skipped ? `, ${o.failed} failed, ${o.skipped} not sent` : ''}`,
      );
    }
    if (best === undefined || r.otherCores < best.otherCores) best = r;
  }
  return best as ScenarioResult;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      only: { type: 'string' },
      probe: { type: 'string' },
      'cpu-prof': { type: 'boolean', default: false },
      out: { type: 'string' },
      'quiet-wait': { type: 'string' },
      retries: { type: 'string' },
      soak: { type: 'string' },
      rounds: { type: 'string' },
      interleave: { type: 'boolean', default: false },
      window: { type: 'string' },
      pin: { type: 'boolean', default: false },
    },
  });
  if (!existsSync(join(REPO_ROOT, 'apps/cli/dist/index.js'))) throw new Error('the CLI is not built: run `npm run build` first');
  const quick = values.quick ?? false;
  const settings: RunSettings = {
    durationS: positive('duration', values.duration, quick ? 3 : 10),
    warmupS: positive('warmup', values.warmup, quick ? 1 : 2),
    probeDispatches: Math.round(positive('probe', values.probe, quick ? 100 : 300)),
    ...(values['cpu-prof'] ? { cpuProfDir: join(REPO_ROOT, '.bench-results', 'profiles') } : {}),
  };
  const quietWaitS = positive('quiet-wait', values['quiet-wait'], quick ? 0 : 120);
  const retries = Math.round(positive('retries', values.retries, quick ? 0 : 3));
  const interleave = values.interleave ?? false;
  const windowS = positive('window', values.window, quick ? 1 : 3);
  if (values.pin && !interleave) throw new Error('--pin goes with --interleave');
  const rounds = Math.max(1, Math.round(positive('rounds', values.rounds, interleave ? (quick ? 2 : 8) : 1)));
  const out = resolve(values.out ?? join(REPO_ROOT, '.bench-results', 'bench.json'));
  const only = new Set(parseOnly(values.only));
  const table = scenarioTable(randomBytes(4).toString('hex')).filter((s) => only.has(s.id));
  const scenarios = table.filter((s) => !s.soak);
  const soakScenarios = table.filter((s) => s.soak);
  const soakSettings: SoakSettings = {
    durationS: positive('soak', values.soak, quick ? 20 : 180),
    sampleEveryS: quick ? 1 : 2,
    probeS: settings.durationS,
  };
  const machine = machineInfo();
  console.error(
    `sluice bench: ${scenarios.length} scenario(s), ${settings.warmupS} s warm-up + ${settings.durationS} s each; ${soakScenarios.length} soak(s) of ${soakSettings.durationS} s; ` +
      `${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}, Redis ${machine.redis}`,
  );

  const load = LoadClient.start();
  const runs: ScenarioResult[] = [];
  let interleaved: InterleavedRun | null = null;
  const soaks: SoakResult[] = [];
  let auditHeap: AuditHeapResult | null = null;
  try {
    if (interleave) {
      console.error(`  interleaved: ${rounds} rounds of ${windowS} s windows${values.pin ? ', pinned' : ''}`);
      await waitForQuiet(QUIET_CORES, quietWaitS, () => {});
      interleaved = await runInterleaved(
        scenarios,
        { rounds, windowS, warmupS: settings.warmupS, pin: values.pin ?? false, cpuProfDir: settings.cpuProfDir },
        load,
      );
      runs.push(...interleaved.results);
    } else {
      for (let round = 1; round <= rounds; round++) {
        if (rounds > 1) console.error(`  round ${round} of ${rounds}`);
        for (const scenario of scenarios) runs.push(await runLeastDisturbed(scenario, settings, load, { retries, quietWaitS }));
      }
    }
    for (const scenario of soakScenarios) {
      await waitForQuiet(QUIET_CORES, quietWaitS, () => {});
      console.error(`  (${scenario.id}) ${scenario.title}, ${soakSettings.durationS} s …`);
      const soak = await runSoak(scenario, soakSettings, load);
      console.error(
        `      ${soak.offeredPerSec} req/s: RSS max ${soak.maxRssMb.toFixed(0)} MB, floor ${soak.rssFloorChangeMb.toFixed(0)} MB from the middle to the last third, slope ${soak.rssSlopeMbPerMin.toFixed(1)} MB/min`,
      );
      soaks.push(soak);
    }
    if (only.has('m')) {
      console.error('  (m) heap per retained audit record …');
      auditHeap = await measureAuditHeap(quick ? AUDIT_HEAP_RECORDS_QUICK : AUDIT_HEAP_RECORDS);
      console.error(`      ${auditHeapLine(auditHeap)}`);
    }
  } finally {
    await load.close();
  }

  const results = interleaved ? interleaved.results : medianRuns(runs);
  const runShape = interleaved
    ? `${settings.warmupS} s warm-up, then ${rounds} rounds of ${windowS} s per scenario, interleaved${values.pin ? ' and pinned' : ''}`
    : `${settings.warmupS} s warm-up + ${settings.durationS} s per scenario${rounds > 1 ? `; the median of ${rounds} rounds` : ''}`;
  const targets = checkTargets(results, soaks, auditHeap);
  const started = new Date().toISOString();
  console.log(`## Sluice bench (${started}; ${machine.cpus} CPUs, ${machine.memoryGiB} GiB, Node ${machine.node}, Redis ${machine.redis}; ${runShape})\n`);
  console.log(resultsTable(results));
  if (interleaved) console.log(`\n### Interleaved rounds\n\n${roundRatiosTable(interleaved.ratios)}`);
  console.log('\n### Details\n');
  console.log(detailsTable(results));
  const commands = redisCommandsTable(results);
  if (commands) console.log(`\n### Redis time by command (INFO commandstats)\n\n${commands}`);
  const open = openLoopTable(results);
  if (open) console.log(`\n### Open loop (${Math.round(OPEN_LOOP_SHARE * 100)} % of each scenario's throughput, evenly spaced)\n\n${open}`);
  if (soaks.length > 0)
    console.log(`\n### Soak (open loop at ${Math.round(OPEN_LOOP_SHARE * 100)} % of a ${soakSettings.probeS} s closed-loop run)\n\n${soakTable(soaks)}`);
  if (auditHeap !== null) console.log(`\n### Heap per retained audit record (m)\n\n${auditHeapLine(auditHeap)}`);
  console.log('\n### Targets\n');
  console.log(targetsTable(targets));
  writeJson(out, {
    generatedAt: started,
    machine,
    settings,
    soakSettings,
    quietWaitS,
    retries,
    rounds,
    results,
    ...(rounds > 1 && !interleaved ? { runs } : {}),
    ...(interleaved ? { windows: interleaved.windows } : {}),
    soaks,
    auditHeap,
    targets,
  });
  console.error(`\nJSON: ${out}`);
  if (runs.some((r) => r.failures.non2xx + r.failures.errors + r.failures.timeouts > 0) || soaks.some((s) => s.failed > 0)) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
