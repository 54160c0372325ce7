import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { writeConfigFile } from '../support/config-file.js';
import { freePort } from '../support/free-port.js';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { poll } from '../support/poll.js';
import { startRedisServer, type RunningRedis } from '../support/redis-server.js';
import { spawnSluice, type SluiceProcess } from '../support/sluice-process.js';
import { openStream } from '../support/sse-client.js';
import { sampleAction } from '../support/start-gateway.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

/*
 * A managed Redis fails over by moving its address (DNS, a VIP) to the promoted replica; the
 * connections already open stay on the old primary, demoted. Here the address is a TCP proxy:
 * two API replicas and a worker are given it, the replica is promoted and the proxy moved. A
 * client that writes meets READONLY and reconnects; what never writes had to follow too: the
 * worker's queue connections (recurring actions stopped until the watchdog replaced them, 30 s
 * and more) and the pub/sub subscriber (deaf for good once the old node was cut off).
 */
describe('the Redis address moves to a promoted replica (a managed failover)', () => {
  let primary: RunningRedis;
  let replica: RunningRedis;
  let proxy: TcpProxy;
  let sink: HttpSink;
  const procs: SluiceProcess[] = [];
  const scope = 'namespace=payments&tenant=acme';

  beforeAll(async () => {
    primary = await startRedisServer();
    replica = await startRedisServer({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
    proxy = await startTcpProxy(primary.port);
    sink = await startSink();
    const config = writeConfigFile(
      stringify({
        state: { backend: 'redis', url: `redis://127.0.0.1:${proxy.port}`, prefix: 'sluice-move' },
        providers: [
          { name: 'hook', type: 'webhook', url: sink.url },
          { name: 'noop', type: 'noop' },
        ],
        executor: { max_retries: 0 },
        background: { enable_retention_reaper: false },
        server: { drain_delay_seconds: 0 },
      }),
    );
    // 6-field cron (one occurrence a second), in every process.
    const env = { SLUICE_TEST_SECONDS_CRON: '1' };
    for (const args of [['serve', '--no-worker'], ['serve', '--no-worker'], ['worker']]) {
      const port = await freePort();
      procs.push(await spawnSluice([...args, '--config', config, '--port', String(port), '--host', '127.0.0.1'], { port, env }));
    }
  }, 60_000);
  afterAll(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await proxy?.close();
    await sink?.close();
    await Promise.all([primary?.stop(), replica?.stop()]);
  });

  it('keeps running jobs and delivering the live stream across replicas once the old primary is gone', async () => {
    const [a, b] = procs as [SluiceProcess, SluiceProcess, SluiceProcess];
    const dispatch = (on: SluiceProcess, id?: string) =>
      fetch(`${on.url}/v1/dispatch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(sampleAction({ provider: 'noop', ...(id === undefined ? {} : { id }) })),
      });
    const created = await fetch(`${a.url}/v1/recurring?${scope}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cron_expr: '* * * * * *', provider: 'hook', action_type: 'tick', payload: {} }),
    });
    expect(created.status).toBe(201);
    await poll(
      'the recurring action to fire',
      () => sink.received.length,
      (n) => n >= 2,
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    const stream = await openStream(`${b.url}/v1/stream`);
    expect(stream.status).toBe(200);

    // The managed failover: the replica promoted, the address moved, the old primary demoted.
    const admin = (port: number) => new Redis({ port, lazyConnect: true });
    const [oldNode, newNode] = [admin(primary.port), admin(replica.port)];
    try {
      await newNode.call('REPLICAOF', 'NO', 'ONE');
      proxy.switchTo(replica.port);
      await oldNode.call('REPLICAOF', '127.0.0.1', String(replica.port));
      const movedAt = sink.received.length;
      for (const on of [a, b])
        await poll(
          'dispatches to succeed after the move',
          async () => (await dispatch(on)).status,
          (s) => s === 200,
          { timeoutMs: 10_000 },
        );
      // The worker's queues follow: occurrences keep coming, well before the watchdog's 30 s.
      await poll(
        'the recurring action to fire after the move',
        () => sink.received.length,
        (n) => n >= movedAt + 3,
        { timeoutMs: 10_000, intervalMs: 100 },
      );
      // The old node cut off from the new primary (a partition, a rebuilt node still up): a
      // subscriber left on it hears nothing. B's stream still gets A's dispatch.
      await oldNode.call('REPLICAOF', 'NO', 'ONE');
      const id = `after-move-${Date.now()}`;
      expect((await dispatch(a, id)).status).toBe(200);
      await stream.next((f) => f.event === 'action_dispatched' && f.data['action_id'] === id, 5000);
    } finally {
      stream.close();
      oldNode.disconnect();
      newNode.disconnect();
    }
  });
});
