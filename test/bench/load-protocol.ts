/** Messages between the bench runner and the load driver process (load-driver.ts). */
import type { BodySpec } from './action-body.js';

export interface LoadOptions {
  url: string;
  path: string;
  body: BodySpec;
  connections: number;
  durationS: number;
}

export interface LatencySummary {
  /** Milliseconds, exact (from every 2xx response time, not autocannon's 1 ms histogram). */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface LoadResult {
  durationS: number;
  /** 2xx responses. */
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  latency: LatencySummary;
}

/** An open-loop run (open-loop.ts): requests sent at `ratePerSec`, evenly spaced, over up to `connections` sockets. */
export interface OpenLoopLoadOptions extends LoadOptions {
  ratePerSec: number;
}

export interface OpenLoopLoadResult {
  offeredPerSec: number;
  achievedPerSec: number;
  ok: number;
  failed: number;
  /** Scheduled requests not sent because too many were outstanding (the server fell behind). */
  skipped: number;
  /** From each request's scheduled send time. */
  latency: LatencySummary;
}

export type DriverRequest = { type: 'run'; id: number; options: LoadOptions } | { type: 'open-loop'; id: number; options: OpenLoopLoadOptions };
export type DriverReply =
  | { type: 'result'; id: number; result: LoadResult }
  | { type: 'open-loop-result'; id: number; result: OpenLoopLoadResult }
  | { type: 'error'; id: number; message: string };
