/**
 * Summarizes a V8 .cpuprofile (from `npm run bench -- --cpu-prof`): where the busy time went,
 * by package (self time) and by function (self and inclusive), as shares of non-idle time.
 *   node --import tsx test/bench/profile-summary.ts .bench-results/profiles/b/CPU.*.cpuprofile [top]
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const IDLE = new Set(['(idle)', '(program)', '(root)']);

function frameName(f: CallFrame): string {
  const where = f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(libs|apps)\//, '$1/');
  return `${f.functionName || '(anonymous)'} ${where}${where ? `:${f.lineNumber + 1}` : ''}`;
}

function packageOf(f: CallFrame): string {
  if (!f.url) return f.functionName;
  const dep = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f.url);
  if (dep) return dep[1] as string;
  const own = /\/(libs|apps)\/([^/]+)\//.exec(f.url);
  if (own) return `${own[1]}/${own[2]}`;
  return f.url.startsWith('node:') ? 'node (internal)' : f.url;
}

interface ProfileSummary {
  busyMs: number;
  byPackage: [string, number][];
  selfByFunction: [string, number][];
  inclusiveByFunction: [string, number][];
}

function summarize(profile: CpuProfile): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const sampled = new Map<number, number>();
  for (const [i, id] of profile.samples.entries()) sampled.set(id, (sampled.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));

  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  const pkg = new Map<string, number>();
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of sampled) {
    const node = byId.get(id);
    if (!node || IDLE.has(node.callFrame.functionName)) continue;
    busy += us;
    add(pkg, packageOf(node.callFrame), us);
    add(self, frameName(node.callFrame), us);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const frame = byId.get(cur)?.callFrame;
      if (!frame || IDLE.has(frame.functionName)) continue;
      const name = frameName(frame);
      if (!seen.has(name)) add(inclusive, name, us);
      seen.add(name);
    }
  }
  const share = (m: Map<string, number>): [string, number][] => [...m].map(([k, us]): [string, number] => [k, us / busy]).sort((a, b) => b[1] - a[1]);
  return { busyMs: busy / 1000, byPackage: share(pkg), selfByFunction: share(self), inclusiveByFunction: share(inclusive) };
}

function main(): void {
  const [file, topArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [top]');
  const top = Number(topArg ?? 30);
  const s = summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
  const print = (title: string, rows: [string, number][]) => {
    console.log(`\n${title}`);
    for (const [name, share] of rows.slice(0, top)) console.log(`${(share * 100).toFixed(1).padStart(6)}%  ${name}`);
  };
  console.log(`busy (non-idle) time: ${(s.busyMs / 1000).toFixed(2)} s`);
  print('by package (self time)', s.byPackage);
  print('by function (self time)', s.selfByFunction);
  print('by function (inclusive)', s.inclusiveByFunction);
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop() ?? '')) main();
