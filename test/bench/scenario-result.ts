/** What one scenario run produces (the JSON file holds a list of these). */
import type { LatencySummary, OpenLoopLoadResult } from './load-protocol.js';
import type { DedupMemory } from './redis-stats.js';
import type { ScenarioId } from './scenarios.js';

export interface ProcessStats {
  role: string;
  pid: number;
  cpuMs: number;
  /** RSS after start-up and a short settle, before any load (API and worker processes). */
  idleRssMb: number;
  rssMb: number;
  peakRssMb: number;
}

export interface RedisProbe {
  /** Serial dispatches (one at a time) sent through a probe replica behind the counting proxy. */
  dispatches: number;
  clientCommandsPerDispatch: number;
  roundTripsPerDispatch: number;
  byCommandPerDispatch: Record<string, number>;
  /** What the idle replica sent over a window as long as the probe (subtracted from the above). */
  background: { seconds: number; commands: number; roundTrips: number; byCommand: Record<string, number> };
  /** Serial p50 latency through the proxy, replies not delayed. */
  serialLatencyMsP50: number;
  replyDelayMs: number;
  /** Serial p50 latency with every Redis reply delayed replyDelayMs. */
  delayedLatencyMsP50: number;
  /** (delayed − undelayed p50) / delay: sequential round trips as the client feels them. */
  latencyRoundTrips: number;
}

export interface RedisResult {
  /** INFO commandstats delta over the measured run / dispatches (includes commands run by Lua scripts). */
  commandsPerDispatch: number;
  byCommandPerDispatch: Record<string, number>;
  /** INFO commandstats `usec` delta / dispatches: Redis's time in each command, µs per dispatch (a script's includes what it runs). */
  commandUsecPerDispatch: Record<string, number>;
  /** Server read events per dispatch under load (concurrent requests coalesce, so ≤ round trips). */
  readsPerDispatch: number;
  netInputBytesPerDispatch: number;
  cpuMsPerDispatch: number;
  usedMemoryBytesPerDispatch: number;
  /** Redis Cluster: each primary's Redis CPU ms per dispatch (their sum is cpuMsPerDispatch); null on one Redis. */
  primaryCpuMsPerDispatch: number[] | null;
  probe: RedisProbe | null;
  dedupMemory: DedupMemory | null;
}

export interface ScenarioResult {
  id: ScenarioId;
  title: string;
  connections: number;
  durationS: number;
  /** 2xx responses in the measured run. */
  requests: number;
  actionsPerRequest: number;
  reqPerSec: number;
  actionsPerSec: number;
  latencyMs: LatencySummary;
  failures: { non2xx: number; errors: number; timeouts: number; statusCodes: Record<string, number> };
  /**
   * Actions the gateway finished during the measured run and its drain (its own counter; for the
   * baseline, 2xx × actions per request). The denominator of every per-request figure below.
   */
  dispatched: number;
  /** CPU of the gateway processes (API replicas + worker; not the load balancer) per request. */
  cpuMsPerRequest: number;
  /** The same per dispatch, split: the API replicas, and the worker (its background work: the audit indexer above all); worker null without one. */
  cpuMsPerDispatch: { api: number; worker: number | null };
  /** Cores the gateway processes used on average during the run. */
  serverCores: number;
  /** Cores the load driver used (near 1.0 means the client, not the server, may be the limit). */
  clientCores: number;
  /**
   * Cores busy with anything else during the run (other processes on the machine, the kernel's
   * network stack beyond process time). Well above 0.1 means the numbers are disturbed.
   */
  otherCores: number;
  /** API processes: the largest RSS at the end of the run, and before the load. */
  rssMb: number;
  idleRssMb: number;
  processes: ProcessStats[];
  redis: RedisResult | null;
  /** The open-loop run after the measured one (scenarios with `openLoop`); null: none. */
  openLoop: OpenLoopLoadResult | null;
  /** Silences created over HTTP before the sanity check (not part of the measured run); null: none. */
  silences: { created: number; setupMs: number } | null;
}
