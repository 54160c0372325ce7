/**
 * Client-side Redis counting for a Redis scenario: a probe replica with the scenario's config,
 * connected through the counting proxy, receives `dispatches` requests one at a time; commands
 * and round trips seen by the proxy in that window, per dispatch, are what one dispatch costs
 * on the wire. Round trips are counted with every reply held back REPLY_DELAY_MS; the rise of
 * the serial p50 latency under that delay, divided by it, cross-checks the count from the
 * client's side (timer granularity makes it read a little high). The probe is an API replica
 * (no worker): the audit indexing its dispatches cause runs elsewhere. The replica's generation
 * polls are not counted; any other background traffic is measured over an idle window as long as the
 * probe and subtracted. Runs after the
 * measured load (the loaded replicas never see the proxy).
 */
import { join } from 'node:path';
import { freePort } from '../support/free-port.js';
import { launchSluice } from './process-launcher.js';
import { RedisCountingProxy, subtractTraffic, trafficDelta } from './redis-counting-proxy.js';
import type { RedisProbe } from './scenario-result.js';
import { sideBodies } from './sanity-check.js';
import type { Scenario } from './scenarios.js';
import { writeSluiceConfig } from './sluice-config.js';

/**
 * Every replica polls the rules, quotas and retention generations (a GET each, every few
 * seconds) whether or not it dispatches; those are left out of the counts.
 */
const GENERATION_POLL = /^[A-Za-z0-9_.-]+:[a-z-]+-generation:\{_:_\}:current$/;

/** Replies are held this long while counting (see redis-counting-proxy.ts). */
const REPLY_DELAY_MS = 5;

export interface ProbeOptions {
  workDir: string;
  redisPort: number;
  rulesDir: string | null;
  dispatches: number;
}

export async function probeRedisTraffic(scenario: Scenario, opts: ProbeOptions): Promise<RedisProbe> {
  const proxy = await RedisCountingProxy.start({ host: '127.0.0.1', port: opts.redisPort });
  proxy.ignore = (c) => c.name === 'GET' && GENERATION_POLL.test(c.arg);
  try {
    const config = writeSluiceConfig(opts.workDir, 'probe.yaml', { backend: 'redis', redisUrl: proxy.url, rulesDir: opts.rulesDir });
    const port = await freePort();
    // API only: the background consumers' blocking polls are not part of a dispatch.
    const probe = await launchSluice({ role: 'probe', command: 'serve', noWorker: true, configFile: config, port, logFile: join(opts.workDir, 'probe.log') });
    try {
      const next = sideBodies(scenario.body, 'probe');
      const send = async () => {
        const res = await fetch(`${probe.url}${scenario.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: next() });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`probe dispatch answered ${res.status}`);
      };
      const sendTimed = async (n: number): Promise<number> => {
        const latencies: number[] = [];
        for (let i = 0; i < n; i++) {
          const t0 = performance.now();
          await send();
          latencies.push(performance.now() - t0);
        }
        latencies.sort((x, y) => x - y);
        return latencies[Math.floor(latencies.length / 2)] ?? Number.NaN;
      };
      // Unmeasured requests first: lazy set-up (script loading, first-use caches) is not per-dispatch cost.
      for (let i = 0; i < 10; i++) await send();
      const serialLatencyMsP50 = await sendTimed(Math.ceil(opts.dispatches / 2));
      proxy.replyDelayMs = REPLY_DELAY_MS;
      await new Promise((r) => setTimeout(r, 100));
      const before = proxy.snapshot();
      const started = performance.now();
      const delayedLatencyMsP50 = await sendTimed(opts.dispatches);
      const elapsedMs = performance.now() - started;
      const during = trafficDelta(proxy.snapshot(), before);
      // Anything else the idle replica sends on its own would show here: count it over an idle
      // window as long as the probe, and take it out (expected: nothing).
      const idleStart = proxy.snapshot();
      await new Promise((r) => setTimeout(r, elapsedMs));
      const background = trafficDelta(proxy.snapshot(), idleStart);
      const d = subtractTraffic(during, background);
      const per = (n: number) => n / opts.dispatches;
      return {
        dispatches: opts.dispatches,
        clientCommandsPerDispatch: per(d.commands),
        roundTripsPerDispatch: per(d.roundTrips),
        byCommandPerDispatch: Object.fromEntries(Object.entries(d.byCommand).map(([name, n]) => [name, per(n)])),
        background: { seconds: elapsedMs / 1000, commands: background.commands, roundTrips: background.roundTrips, byCommand: background.byCommand },
        serialLatencyMsP50,
        replyDelayMs: REPLY_DELAY_MS,
        delayedLatencyMsP50,
        latencyRoundTrips: (delayedLatencyMsP50 - serialLatencyMsP50) / REPLY_DELAY_MS,
      };
    } finally {
      await probe.stop();
    }
  } finally {
    await proxy.close();
  }
}
