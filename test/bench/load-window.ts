/**
 * One measured load run against a started scenario: the load, its drain, and what the processes
 * did meanwhile (their CPU, the machine's busy time, the dispatches the gateway counted). Shared
 * by a whole scenario run (scenario-runner.ts) and an interleaved window (interleave.ts).
 */
import { actionsPerRequest } from './action-body.js';
import { dispatchedActions } from './dispatch-counter.js';
import type { LoadClient } from './load-client.js';
import type { LoadResult } from './load-protocol.js';
import { CpuMeter, machineBusyMs } from './proc-stats.js';
import type { Scenario } from './scenarios.js';
import type { Topology } from './topology.js';

/** After a load run stops, requests already sent still finish on the server: let them, before reading counters. */
export const DRAIN_MS = 300;

export interface LoadWindow {
  load: LoadResult;
  /** The gateway's own counter's delta (sluice), or 2xx × actions per request (the baseline). */
  dispatched: number;
  /** Per measured pid (gateway processes and the balancer), CPU ms over the run and its drain. */
  cpuMs: Map<number, number>;
  /** The load driver's CPU ms over the run (not the drain). */
  clientCpuMs: number;
  /** The whole machine's busy ms over the run and its drain. */
  busyMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `around`: read just before the load starts and just after the drain (Redis counters), outside the dispatch count's requests. */
export async function measureLoadWindow(
  scenario: Scenario,
  topology: Topology,
  load: LoadClient,
  durationS: number,
  around: { before?: () => Promise<void>; after?: () => Promise<void> } = {},
): Promise<LoadWindow> {
  // Sluice counts its dispatches; the baseline has no counter, its 2xx count stands in.
  const countDispatches = scenario.server === 'sluice' ? () => dispatchedActions(topology.api.map((p) => p.url)) : undefined;
  const measured = [...topology.gateway, ...(topology.balancer ? [topology.balancer] : [])];
  const dispatchedBefore = await countDispatches?.();
  const cpu = new CpuMeter([...measured.map((p) => p.pid), load.pid]);
  const busyBefore = machineBusyMs();
  await around.before?.();
  const run = await load.run({ url: topology.url, path: scenario.path, body: scenario.body, connections: scenario.connections, durationS });
  const clientCpuMs = cpu.elapsed().get(load.pid) ?? 0;
  await sleep(DRAIN_MS);
  const cpuMs = cpu.elapsed();
  const busyMs = machineBusyMs() - busyBefore;
  await around.after?.();
  const dispatched =
    countDispatches && dispatchedBefore !== undefined ? (await countDispatches()) - dispatchedBefore : run.ok * actionsPerRequest(scenario.body);
  return { load: run, dispatched, cpuMs, clientCpuMs, busyMs };
}
