import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { poll } from '../support/poll.js';
import { spawnSluice, type SluiceProcess } from '../support/sluice-process.js';
import { Cluster } from './harness.js';

type Json = Record<string, unknown>;

// Test mode in every spawned process (they inherit the environment): 6-field cron, one occurrence a second.
process.env.SLUICE_TEST_SECONDS_CRON = '1';

interface Delivery {
  id: string;
  occurrence: string;
}

/** A webhook receiver that keeps every delivery, duplicates included. */
async function startSink(): Promise<{ url: string; deliveries: Delivery[]; server: Server }> {
  const deliveries: Delivery[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const action = JSON.parse(body) as { id: string; metadata?: { recurring_occurrence?: string } };
      deliveries.push({ id: action.id, occurrence: action.metadata?.recurring_occurrence ?? '' });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, deliveries, server };
}

/** Every delivery is its own occurrence: no action id and no occurrence time arrives twice. */
function expectOncePerOccurrence(deliveries: Delivery[]): void {
  expect(new Set(deliveries.map((d) => d.id)).size).toBe(deliveries.length);
  expect(new Set(deliveries.map((d) => d.occurrence)).size).toBe(deliveries.length);
  expect(deliveries.every((d) => d.occurrence !== '')).toBe(true);
}

describe('cluster: a recurring action with 3 replicas and 2 workers', () => {
  let cluster: Cluster;
  let sink: Awaited<ReturnType<typeof startSink>>;
  const scope = 'namespace=payments&tenant=acme';

  const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> => {
    const res = await fetch(`${cluster.nextApi().url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
  };
  const record = async (id: string) => (await api('GET', `/v1/recurring/${id}?${scope}`)).body;
  /** Polls the cluster over HTTP every 200 ms, for up to 30 s. */
  const POLL = { timeoutMs: 30_000, intervalMs: 200 };

  beforeAll(async () => {
    sink = await startSink();
    cluster = await Cluster.start({
      apis: 3,
      workers: 2,
      config: {
        // `quiet` delivers nowhere: the probe schedule below must not show up in the sink.
        providers: [
          { name: 'hook', type: 'webhook', url: sink.url },
          { name: 'quiet', type: 'noop' },
        ],
        executor: { max_retries: 0 },
        background: { enable_retention_reaper: false },
      },
    });
  }, 90_000);
  afterAll(async () => {
    await cluster?.stop();
    sink?.server.close();
  });

  it('dispatches exactly once per occurrence, and nothing once paused', async () => {
    const created = await api('POST', `/v1/recurring?${scope}`, { cron_expr: '* * * * * *', provider: 'hook', action_type: 'tick', payload: { n: 1 } });
    expect(created.status).toBe(201);
    const id = created.body.recurring_id as string;

    // At-least-once delivery, made worse on purpose: extra deliveries of the same schedule job
    // (the envelope the BullMQ scheduler stores) land on both workers between the real ones.
    const queue = new Queue('recurring-fire', { connection: { url: cluster.redis.url }, prefix: '{sluice-cluster}:bull' });
    let extra = 0;
    const duplicator = setInterval(() => {
      for (let i = 0; i < 3; i++)
        void queue.add(
          'recurring-fire',
          { id: `recurring:${id}`, data: { namespace: 'payments', tenant: 'acme', id } },
          { removeOnComplete: true, removeOnFail: true },
        );
      extra += 3;
    }, 150);
    try {
      await poll(
        'six deliveries',
        () => sink.deliveries.length,
        (n) => n >= 6,
        POLL,
      );
    } finally {
      clearInterval(duplicator);
      await queue.close();
    }
    expect(extra).toBeGreaterThan(20);
    const paused = await api('POST', `/v1/recurring/${id}/pause?${scope}`);
    expect(paused.status).toBe(200);
    const count = paused.body.execution_count as number;
    expect(count).toBeGreaterThanOrEqual(6);

    // An occurrence claimed just before the pause may still be delivering: wait for the sink to catch up.
    const delivered = await poll(
      `${count} deliveries`,
      () => sink.deliveries.length,
      (n) => n >= count,
      { ...POLL, timeoutMs: 10_000 },
    );
    expect(delivered).toBe(count);
    expectOncePerOccurrence(sink.deliveries);

    // The audit trail agrees, whichever replica is asked: one executed record per occurrence.
    const audit = await poll(
      `${count} audit records`,
      async () => (await api('GET', `/v1/audit?caller_id=${encodeURIComponent(`recurring:${id}`)}&limit=1000`)).body.records as Json[],
      (records) => records.length >= count,
      POLL,
    );
    expect(audit).toHaveLength(count);
    expect(audit.every((r) => r.outcome === 'executed')).toBe(true);
    expect(new Set(audit.map((r) => r.action_id))).toEqual(new Set(sink.deliveries.map((d) => d.id)));

    // Paused: nothing more comes. A probe schedule created after the pause firing twice means at
    // least one whole slot passed with the workers firing; the paused one would have fired in it too.
    const probe = await api('POST', `/v1/recurring?${scope}`, { cron_expr: '* * * * * *', provider: 'quiet', action_type: 'probe', payload: {} });
    const probeId = probe.body.recurring_id as string;
    await poll(
      'two executions of the probe',
      () => record(probeId),
      (r) => (r.execution_count as number) >= 2,
      POLL,
    );
    await api('DELETE', `/v1/recurring/${probeId}?${scope}`);
    expect(sink.deliveries).toHaveLength(count);
    expect(await record(id)).toMatchObject({ enabled: false, next_execution: null, execution_count: count });
    await api('DELETE', `/v1/recurring/${id}?${scope}`);
  }, 90_000);

  it('a worker started on an emptied BullMQ re-creates the schedules; missed occurrences are skipped', async () => {
    sink.deliveries.length = 0;
    const created = await api('POST', `/v1/recurring?${scope}`, { cron_expr: '* * * * * *', provider: 'hook', action_type: 'tick', payload: { n: 2 } });
    const id = created.body.recurring_id as string;
    await poll(
      'two deliveries',
      () => sink.deliveries.length,
      (n) => n >= 2,
      POLL,
    );

    // All workers die and BullMQ's data is lost; the records stay in state.
    for (const w of cluster.workers) w.kill('SIGKILL');
    await Promise.all(cluster.workers.map((w) => w.exited));
    const killedAt = Date.now();
    const redis = new Redis(cluster.redis.url);
    try {
      const keys = await redis.keys('{sluice-cluster}:bull:*');
      if (keys.length > 0) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
    const beforeRestart = (await record(id)).execution_count as number;
    await new Promise((r) => setTimeout(r, 3000)); // occurrences pass with no worker

    const port = await freePort();
    const spawnedAt = Date.now();
    const fresh = await spawnSluice(['worker', '--config', cluster.configFile, '--port', String(port), '--host', '127.0.0.1'], { port });
    cluster.workers.push(fresh);
    const after = await poll(
      'three executions after the restart',
      () => record(id),
      (r) => (r.execution_count as number) >= beforeRestart + 3,
      POLL,
    );
    expect(after.execution_count as number).toBeGreaterThanOrEqual(beforeRestart + 3);
    expect(after.enabled).toBe(true);

    await api('POST', `/v1/recurring/${id}/pause?${scope}`);
    const total = (await record(id)).execution_count as number;
    await poll(
      `${total} deliveries`,
      () => sink.deliveries.length,
      (n) => n >= total,
      { ...POLL, timeoutMs: 10_000 },
    );
    expect(sink.deliveries).toHaveLength(total);
    expectOncePerOccurrence(sink.deliveries);
    // No backlog: of the slots that passed without a worker, none was fired but possibly the last one,
    // which is the latest due when the fresh worker came up (its start takes longer than a slot).
    const duringDowntime = sink.deliveries.map((d) => Date.parse(d.occurrence)).filter((t) => t > killedAt + 1000 && t < spawnedAt - 1000);
    expect(duringDowntime).toEqual([]);
  }, 120_000);

  it('two replicas updating the cron and the zone of one action at once: both changes are kept', async () => {
    const [a, b] = cluster.apis as [SluiceProcess, SluiceProcess];
    const put = (on: SluiceProcess, id: string, body: Json) =>
      fetch(`${on.url}/v1/recurring/${id}?${scope}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const lost: Json[] = [];
    for (let round = 0; round < 30; round++) {
      const created = await api('POST', `/v1/recurring?${scope}`, { cron_expr: '0 0 3 * * *', provider: 'quiet', action_type: 'race', payload: {} });
      const id = created.body.recurring_id as string;
      const answers = await Promise.all([put(a, id, { cron_expr: '0 0 5 * * *' }), put(b, id, { timezone: 'Europe/Paris' })]);
      expect(answers.map((r) => r.status)).toEqual([200, 200]);
      const after = await record(id);
      if (after.cron_expr !== '0 0 5 * * *' || after.timezone !== 'Europe/Paris') lost.push({ round, cron_expr: after.cron_expr, timezone: after.timezone });
      await api('DELETE', `/v1/recurring/${id}?${scope}`);
    }
    // Before the schedule was rebuilt from the record being swapped, most rounds lost the cron.
    expect(lost).toEqual([]);
  }, 90_000);
});
