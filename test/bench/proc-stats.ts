/**
 * CPU time and memory of another process, from /proc (Linux): utime+stime of /proc/<pid>/stat
 * in clock ticks, VmRSS and VmHWM of /proc/<pid>/status. Reading /proc costs the measured
 * process nothing.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    const n = Number(out.stdout?.trim());
    ticksPerSecond = Number.isFinite(n) && n > 0 ? n : 100;
  }
  return ticksPerSecond;
}

/** CPU time (user + system) the process has used so far, in milliseconds. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Field 14 (utime) and 15 (stime) overall are indexes 11 and 12 here (field 3 is index 0).
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / clockTicks();
}

export interface MemoryStats {
  /** Resident set size now, MiB. */
  rssMb: number;
  /** Peak resident set size, MiB. */
  peakRssMb: number;
}

export function memory(pid: number): MemoryStats {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
    return m ? Number(m[1]) : Number.NaN;
  };
  return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
}

/** CPU milliseconds used by a group of processes since a snapshot. */
export class CpuMeter {
  private readonly start: Map<number, number>;

  constructor(private readonly pids: readonly number[]) {
    this.start = new Map(pids.map((pid) => [pid, cpuMs(pid)]));
  }

  /** Per-pid CPU ms since construction. */
  elapsed(): Map<number, number> {
    return new Map(this.pids.map((pid) => [pid, cpuMs(pid) - (this.start.get(pid) ?? 0)]));
  }
}

/** CPU time the whole machine has been busy (all cores; not idle, not iowait), in milliseconds. */
export function machineBusyMs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const [, ...fields] = line.trim().split(/\s+/);
  const ticks = fields.map(Number);
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return ((total - idle) * 1000) / clockTicks();
}
