/**
 * `npm run bench:alloc [-- --only b,k --window 5]`: what a dispatch allocates, by function. A
 * single-process sluice scenario runs with V8's sampling heap profiler (alloc-sampler.mjs, objects
 * already collected included) over one load window after a warm-up; the samples, divided by the
 * dispatches of the window, give bytes allocated per dispatch, by allocating function and by the
 * nearest gateway frame (the first frame up the stack in libs/ or apps/).
 *
 * Unlike req/s on a shared VM, allocation per dispatch hardly moves from run to run, and the
 * garbage collector's share of a dispatch's CPU follows it: a change that should take work off
 * the collector can be judged here before the interleaved bench can see it. The profiler slows
 * the process several times over, so the window's throughput means nothing.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startOtlpReceiver } from '../support/otlp-receiver.js';
import { interleavable, prepareScenario } from './interleave.js';
import { LoadClient } from './load-client.js';
import { measureLoadWindow } from './load-window.js';
import { REPO_ROOT } from './process-launcher.js';
import { scenarioTable, type Scenario, type ScenarioId } from './scenarios.js';

const SAMPLER = fileURLToPath(new URL('./alloc-sampler.mjs', import.meta.url));

/** The part of a V8 sampling heap profile read here (HeapProfiler.SamplingHeapProfile). */
export interface SamplingHeapProfile {
  head: ProfileNode;
  samples: { size: number; nodeId: number }[];
}
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children: ProfileNode[];
}

export interface AllocationSummary {
  id: ScenarioId;
  dispatches: number;
  bytesPerDispatch: number;
  /** Bytes per dispatch by the function that allocated, largest first. */
  byFunction: { frame: string; bytes: number }[];
  /** Bytes per dispatch by the nearest gateway frame up the stack ("(outside the gateway)" when none). */
  byGatewayFrame: { frame: string; bytes: number }[];
}

const OUTSIDE = '(outside the gateway)';

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const at = url.lastIndexOf('node_modules/');
  const file = at >= 0 ? url.slice(at + 'node_modules/'.length) : url.startsWith('file://') ? relative(REPO_ROOT, fileURLToPath(url)) : url;
  return `${functionName || '(anonymous)'} ${file || '(native)'}${file ? `:${lineNumber + 1}` : ''}`;
}

function isGatewayFrame(node: ProfileNode): boolean {
  const { url } = node.callFrame;
  return url.startsWith('file://') && !url.includes('/node_modules/') && /\/(libs|apps)\//.test(url);
}

/** Sums a profile's samples per allocating function and per nearest gateway frame, per dispatch. */
export function summarizeAllocations(id: ScenarioId, profile: SamplingHeapProfile, dispatches: number, top = 20): AllocationSummary {
  const bytesOf = new Map<number, number>();
  for (const s of profile.samples) bytesOf.set(s.nodeId, (bytesOf.get(s.nodeId) ?? 0) + s.size);
  const byFunction = new Map<string, number>();
  const byGatewayFrame = new Map<string, number>();
  let total = 0;
  // Iterative: a deep stack must not overflow ours.
  const stack: { node: ProfileNode; gateway: string }[] = [{ node: profile.head, gateway: OUTSIDE }];
  while (stack.length > 0) {
    const { node, gateway: above } = stack.pop() as { node: ProfileNode; gateway: string };
    const gateway = isGatewayFrame(node) ? frameName(node) : above;
    const bytes = bytesOf.get(node.id) ?? 0;
    if (bytes > 0) {
      total += bytes;
      const name = frameName(node);
      byFunction.set(name, (byFunction.get(name) ?? 0) + bytes);
      byGatewayFrame.set(gateway, (byGatewayFrame.get(gateway) ?? 0) + bytes);
    }
    for (const child of node.children) stack.push({ node: child, gateway });
  }
  const perDispatch = (m: Map<string, number>) =>
    [...m]
      .sort((x, y) => y[1] - x[1])
      .slice(0, top)
      .map(([frame, bytes]) => ({ frame, bytes: bytes / dispatches }));
  return { id, dispatches, bytesPerDispatch: total / dispatches, byFunction: perDispatch(byFunction), byGatewayFrame: perDispatch(byGatewayFrame) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitForFile(path: string, timeoutMs: number): Promise<string> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      const text = readFileSync(path, 'utf8');
      if (text.length > 0) return text;
    } catch {
      // not written yet
    }
    if (Date.now() > until) throw new Error(`alloc-profile: no profile at ${path} after ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** One scenario: started with the sampler, warmed up, then sampled over one load window. */
export async function profileAllocations(
  scenario: Scenario,
  opts: { windowS: number; warmupS: number; top?: number },
  load: LoadClient,
): Promise<AllocationSummary> {
  if (scenario.server !== 'sluice' || !interleavable(scenario))
    throw new Error(`alloc-profile takes single-process sluice scenarios without Redis; not (${scenario.id})`);
  const outDir = mkdtempSync(join(tmpdir(), `sluice-alloc-${scenario.id}-`));
  const out = join(outDir, 'allocations.json');
  const collector = scenario.tracing ? await startOtlpReceiver({ collect: false }) : null;
  // The gateway inherits the environment at launch: the sampler finds its output path there.
  const saved = process.env.SLUICE_BENCH_ALLOC_OUT;
  process.env.SLUICE_BENCH_ALLOC_OUT = out;
  try {
    const { topology, cleanup } = await prepareScenario(scenario, collector, ['--import', SAMPLER]);
    try {
      if (opts.warmupS > 0) await measureLoadWindow(scenario, topology, load, opts.warmupS);
      const [gateway] = topology.gateway;
      if (gateway === undefined) throw new Error('alloc-profile: the scenario started no gateway');
      process.kill(gateway.pid, 'SIGUSR2');
      const window = await measureLoadWindow(scenario, topology, load, opts.windowS);
      process.kill(gateway.pid, 'SIGUSR2');
      const profile = JSON.parse(await waitForFile(out, 30_000)) as SamplingHeapProfile | { error: string };
      if ('error' in profile) throw new Error(`alloc-profile: the sampler failed: ${profile.error}`);
      return summarizeAllocations(scenario.id, profile, Math.max(1, window.dispatched), opts.top);
    } finally {
      await cleanup();
    }
  } finally {
    if (saved === undefined) delete process.env.SLUICE_BENCH_ALLOC_OUT;
    else process.env.SLUICE_BENCH_ALLOC_OUT = saved;
    await collector?.close();
    rmSync(outDir, { recursive: true, force: true });
  }
}

export function allocationTables(s: AllocationSummary): string {
  const kb = (bytes: number) => (bytes / 1024).toFixed(2);
  const rows = (list: AllocationSummary['byFunction']) => list.map((x) => `| ${x.frame.replaceAll('|', '\\|')} | ${kb(x.bytes)} |`).join('\n');
  return [
    `### (${s.id}): ${kb(s.bytesPerDispatch)} KiB allocated per dispatch (${s.dispatches} dispatches sampled)`,
    '',
    '| allocating function | KiB per dispatch |',
    '|---|--:|',
    rows(s.byFunction),
    '',
    '| nearest gateway frame | KiB per dispatch |',
    '|---|--:|',
    rows(s.byGatewayFrame),
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { only: { type: 'string' }, window: { type: 'string' }, warmup: { type: 'string' }, top: { type: 'string' } } });
  const ids = new Set((values.only ?? 'b').split(',').map((x) => x.trim()));
  const scenarios = scenarioTable('alloc').filter((s) => ids.has(s.id));
  if (scenarios.length === 0) throw new Error(`--only ${values.only}: no such scenario`);
  const load = LoadClient.start();
  try {
    for (const scenario of scenarios) {
      console.error(`  (${scenario.id}) ${scenario.title}: sampling allocations …`);
      const summary = await profileAllocations(
        scenario,
        // 8 s: long enough for (b) to fill the audit trail's byte cap, past which every batch also evicts (its steady state).
        { windowS: Number(values.window ?? 5), warmupS: Number(values.warmup ?? 8), top: Number(values.top ?? 20) },
        load,
      );
      console.log(allocationTables(summary));
    }
  } finally {
    await load.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
