/**
 * An open-loop load: requests are sent on a fixed schedule (rate per second, evenly spaced),
 * whether or not earlier ones have answered, and each latency is measured from the moment the
 * schedule said to send it, so a server stall shows in the latencies instead of slowing the
 * sender (no coordinated omission). autocannon's `overallRate` is not this: it gives each
 * connection a per-second quota that it spends back to back at the start of every second, a
 * closed loop in bursts.
 */
import { Pool } from 'undici';
import type { LatencySummary, OpenLoopLoadResult } from './load-protocol.js';

export interface OpenLoopOptions {
  url: string;
  path: string;
  ratePerSec: number;
  durationS: number;
  /** Sent at the same rate before the measured part and not counted: the pool opens its sockets, both sides warm up. */
  warmupS: number;
  /** Sockets the pool may open; a request waits in the pool's queue (its wait counted) when all are busy. */
  connections: number;
  nextBody: () => string;
}

/** Past this many unanswered requests the server is not keeping up; the rest of the schedule is skipped, not queued without bound. */
const MAX_OUTSTANDING = 20_000;
const TICK_MS = 1;

export function summarizeLatencies(samples: Float64Array, count: number): LatencySummary {
  const sorted = samples.slice(0, count).sort();
  const at = (q: number) => (count === 0 ? Number.NaN : (sorted[Math.min(count - 1, Math.floor(q * count))] ?? Number.NaN));
  let sum = 0;
  for (let i = 0; i < count; i++) sum += sorted[i] ?? 0;
  return {
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: count === 0 ? Number.NaN : (sorted[count - 1] ?? Number.NaN),
    mean: count === 0 ? Number.NaN : sum / count,
  };
}

export async function runOpenLoop(opts: OpenLoopOptions): Promise<OpenLoopLoadResult> {
  const pool = new Pool(opts.url, { connections: opts.connections, pipelining: 1 });
  const warmup = Math.floor(opts.ratePerSec * opts.warmupS);
  const total = warmup + Math.floor(opts.ratePerSec * opts.durationS);
  const intervalMs = 1000 / opts.ratePerSec;
  const latencies = new Float64Array(total - warmup);
  let count = 0;
  let ok = 0;
  let failed = 0;
  let skipped = 0;
  let outstanding = 0;
  const inFlight: Promise<void>[] = [];

  const send = (scheduledAt: number, measured: boolean): Promise<void> => {
    outstanding++;
    return pool
      .request({ method: 'POST', path: opts.path, headers: { 'content-type': 'application/json' }, body: opts.nextBody() })
      .then(async (res) => {
        await res.body.dump();
        if (!measured) return;
        if (res.statusCode >= 200 && res.statusCode < 300) {
          ok++;
          latencies[count++] = performance.now() - scheduledAt;
        } else failed++;
      })
      .catch(() => {
        if (measured) failed++;
      })
      .finally(() => {
        outstanding--;
      });
  };

  const start = performance.now();
  let measuredFrom = start;
  try {
    await new Promise<void>((resolve) => {
      let scheduled = 0;
      const tick = () => {
        const due = Math.min(total, Math.floor((performance.now() - start) / intervalMs) + 1);
        if (scheduled < warmup && due >= warmup) measuredFrom = start + warmup * intervalMs;
        for (; scheduled < due; scheduled++) {
          const measured = scheduled >= warmup;
          if (outstanding >= MAX_OUTSTANDING) skipped += measured ? 1 : 0;
          else inFlight.push(send(start + scheduled * intervalMs, measured));
        }
        if (scheduled < total) setTimeout(tick, TICK_MS);
        else resolve();
      };
      tick();
    });
    await Promise.all(inFlight);
  } finally {
    await pool.close();
  }
  const elapsedS = (performance.now() - measuredFrom) / 1000;
  return {
    offeredPerSec: opts.ratePerSec,
    achievedPerSec: ok / Math.max(elapsedS, opts.durationS),
    ok,
    failed,
    skipped,
    latency: summarizeLatencies(latencies, count),
  };
}
