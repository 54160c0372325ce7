import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { poll } from '../support/poll.js';
import { rulesDir } from '../support/rules-dir.js';
import { sampleAction } from '../support/start-gateway.js';
import { Cluster, REDIS_DEPLOYMENTS } from './harness.js';

const RUNS = 16;
const step = (name: string, provider: string, extra: Record<string, unknown> = {}) => ({ name, provider, action_type: name, ...extra });
const DEFINITIONS = [
  // Both delays leave a window in which no step of any run is calling its provider.
  { name: 'paced', steps: [step('first', 'a'), { name: 'inner', sub_chain: 'inner', delay_seconds: 2 }, step('last', 'c', { delay_seconds: 1 })] },
  { name: 'inner', steps: [step('i1', 'b'), step('i2', 'b', { delay_seconds: 1 })] },
  { name: 'parked', steps: [step('p1', 'a'), step('p2', 'c', { delay_seconds: 3600 })] },
];
const RULES = `
rules:
  - { name: paced, priority: 1, condition: { field: action.action_type, eq: paced }, action: { type: chain, chain_name: paced } }
  - { name: parked, priority: 2, condition: { field: action.action_type, eq: parked }, action: { type: chain, chain_name: parked } }
`;

type Run = { status: string; steps: { name: string; status: string; child_chain_id: string | null }[] };

describe.each(REDIS_DEPLOYMENTS)('cluster: chain runs (2 replicas, 2 workers) (%s Redis)', (redis) => {
  let cluster: Cluster;
  const sinks: Record<'a' | 'b' | 'c', HttpSink> = {} as never;
  const api = () => cluster.nextApi().url;
  const getRun = async (id: string) => (await (await fetch(`${api()}/v1/chains/${id}`)).json()) as Run;
  const start = async (chain: string, i: number) => {
    const res = await fetch(`${api()}/v1/dispatch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(sampleAction({ tenant: 'chains', provider: 'a', action_type: chain, payload: { i } })),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { chain_id: string }).chain_id;
  };

  beforeAll(async () => {
    for (const name of ['a', 'b', 'c'] as const) sinks[name] = await startSink();
    cluster = await Cluster.start({
      redis,
      apis: 2,
      workers: 2,
      config: {
        rules: { directory: rulesDir({ 'chains.yaml': RULES }) },
        providers: (['a', 'b', 'c'] as const).map((name) => ({ name, type: 'webhook', url: sinks[name].url })),
        executor: { max_retries: 0, timeout_seconds: 2 },
        chains: { definitions: DEFINITIONS },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    for (const sink of Object.values(sinks)) await sink?.close();
  });

  it('a worker SIGKILLed mid-chain: every run completes and each step reaches its sink exactly once', async () => {
    const ids = await Promise.all(Array.from({ length: RUNS }, (_, i) => start('paced', i)));
    // Every run past its first step and waiting out the delay before its sub-chain: then kill.
    await poll(
      'every first step done',
      () => Promise.all(ids.map(getRun)),
      (runs) => runs.every((r) => r.steps[0]?.status === 'completed'),
      {
        timeoutMs: 30_000,
        intervalMs: 50,
      },
    );
    const victim = cluster.workers[0]!;
    victim.kill('SIGKILL');
    expect((await victim.exited).signal).toBe('SIGKILL');

    const runs = await poll(
      'every run ended',
      () => Promise.all(ids.map(getRun)),
      (all) => all.every((r) => r.status !== 'running'),
      {
        timeoutMs: 60_000,
        intervalMs: 100,
      },
    );
    expect(runs.map((r) => r.status)).toEqual(ids.map(() => 'completed'));
    const children = runs.map((r) => r.steps[1]?.child_chain_id as string);
    // Quiet time for a duplicate (a second claim, a retried job) to show up before counting.
    await new Promise((r) => setTimeout(r, 2000));
    const count = (sink: HttpSink, chainId: string, stepName: string) =>
      sink.received.filter((c) => c.metadata['chain_id'] === chainId && c.metadata['chain_step'] === stepName).length;
    for (const [i, id] of ids.entries()) {
      const child = children[i] as string;
      expect([count(sinks.a, id, 'first'), count(sinks.b, child, 'i1'), count(sinks.b, child, 'i2'), count(sinks.c, id, 'last')]).toEqual([1, 1, 1, 1]);
    }
    expect(sinks.a.received.length + sinks.b.received.length + sinks.c.received.length).toBe(RUNS * 4);
  }, 120_000);

  it('cancels sent to both replicas at once: exactly one wins, the other is 409', async () => {
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => start('parked', i)));
    for (const id of ids) {
      const [one, two] = cluster.apis.map((p) =>
        fetch(`${p.url}/v1/chains/${id}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then((r) => r.status),
      );
      expect([await one, await two].sort()).toEqual([200, 409]);
      expect((await getRun(id)).status).toBe('cancelled');
    }
  }, 60_000);

  it('a definition naming a sub_chain that another replica deletes at the same time: never stored pointing at nothing', async () => {
    const [a, b] = cluster.apis.map((p) => p.url) as [string, string];
    const send = (base: string, method: string, path: string, body?: unknown) =>
      fetch(`${base}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const dangling: unknown[] = [];
    for (let round = 0; round < 20; round++) {
      const [child, parent] = [`race-child-${round}`, `race-parent-${round}`];
      expect((await send(a, 'POST', '/v1/chains/definitions', { name: child, steps: [step('c1', 'a')] })).status).toBe(201);
      await poll(
        'the other replica to see the child',
        async () => (await send(b, 'GET', `/v1/chains/definitions/${child}`)).status,
        (s) => s === 200,
      );
      const [put, del] = await Promise.all([
        send(b, 'PUT', `/v1/chains/definitions/${parent}`, { name: parent, steps: [{ name: 's1', sub_chain: child }] }),
        send(a, 'DELETE', `/v1/chains/definitions/${child}`),
      ]);
      // Both replicas' copies catch up; then no stored parent may name a child that is gone.
      const stored = async (base: string, name: string) => (await send(base, 'GET', `/v1/chains/definitions/${name}`)).status === 200;
      await new Promise((r) => setTimeout(r, 300));
      for (const base of [a, b]) {
        if ((await stored(base, parent)) && !(await stored(base, child))) dangling.push({ round, put: put.status, delete: del.status });
      }
      if (put.status < 300) expect(await stored(a, child)).toBe(true);
      if (del.status === 204) expect(await stored(a, parent)).toBe(false);
      await send(a, 'DELETE', `/v1/chains/definitions/${parent}`);
      await send(a, 'DELETE', `/v1/chains/definitions/${child}`);
    }
    // Before the check after each write, every round stored the parent and deleted the child.
    expect(dangling).toEqual([]);
  }, 90_000);
});
