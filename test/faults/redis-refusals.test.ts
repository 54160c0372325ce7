import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeConfigFile } from '../support/config-file.js';
import { freePort } from '../support/free-port.js';
import { poll } from '../support/poll.js';
import { startRedisServer, type RunningRedis } from '../support/redis-server.js';
import { spawnSluice, type SluiceProcess } from '../support/sluice-process.js';
import { sampleAction } from '../support/start-gateway.js';

/**
 * A Redis that answers but refuses writes for a while: a primary demoted by a managed failover
 * (READONLY) and a failed snapshot (MISCONF). Each dispatch is a 503 STATE_UNAVAILABLE with
 * Retry-After (it was a 500, which clients do not retry), and the gateway serves again once Redis
 * takes writes; after READONLY it reconnects, as a moved failover address needs.
 */
describe('a Redis refusing writes (real processes)', () => {
  let redis: RunningRedis;
  let other: RunningRedis;
  let admin: Redis;
  let proc: SluiceProcess;
  const dispatch = async () => {
    const res = await fetch(`${proc.url}/v1/dispatch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(sampleAction({ provider: 'noop' })),
    });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> };
  };
  /** The gateway's connections: every client but this test's own. */
  const gatewayClientIds = async () => {
    const own = String(await admin.client('ID'));
    return ((await admin.call('CLIENT', 'LIST', 'TYPE', 'normal')) as string)
      .split('\n')
      .map((line) => /^id=(\d+)/.exec(line)?.[1])
      .filter((id): id is string => id !== undefined && id !== own);
  };

  beforeAll(async () => {
    [redis, other] = await Promise.all([startRedisServer(), startRedisServer()]);
    admin = new Redis(redis.url);
    const port = await freePort();
    const config = writeConfigFile(
      ['state:', '  backend: redis', `  url: "${redis.url}"`, 'providers:', '  - {name: noop, type: noop}', 'server:', '  drain_delay_seconds: 0'].join('\n'),
    );
    proc = await spawnSluice(['serve', '--config', config, '--port', String(port), '--host', '127.0.0.1'], { port });
  });
  afterAll(async () => {
    proc?.kill('SIGKILL');
    admin?.disconnect();
    await Promise.all([redis?.stop(), other?.stop()]);
  });

  it('answers 503 while the primary it was given is demoted, reconnects, and serves once it is a primary again', async () => {
    expect((await dispatch()).status).toBe(200);
    const before = new Set(await gatewayClientIds());
    expect(before.size).toBeGreaterThan(0);
    await admin.call('REPLICAOF', '127.0.0.1', String(other.port));
    const refused = await dispatch();
    expect(refused).toMatchObject({ status: 503, retryAfter: '2', body: { code: 'STATE_UNAVAILABLE' } });
    // Counted as a failed state operation.
    const metrics = await (await fetch(`${proc.url}/metrics`)).text();
    expect(Number(/^sluice_state_errors_total\{operation="request"\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
    // The connection that met READONLY was replaced.
    await poll('a reconnect after READONLY', gatewayClientIds, (ids) => ids.some((id) => !before.has(id)), { timeoutMs: 5000 });
    await admin.call('REPLICAOF', 'NO', 'ONE');
    await poll(
      'dispatches to succeed again',
      async () => (await dispatch()).status,
      (s) => s === 200,
      { timeoutMs: 10_000 },
    );
  });

  it('answers 503 while Redis cannot snapshot (MISCONF), and serves once it can', async () => {
    // The snapshot's path made a directory: BGSAVE cannot write it.
    const dir = (await admin.config('GET', 'dir'))[1] as string;
    mkdirSync(join(dir, 'dump.rdb', 'x'), { recursive: true });
    await admin.config('SET', 'save', '3600 1');
    await admin.bgsave();
    await poll('the snapshot to fail', async () => (await admin.info('persistence')).includes('rdb_last_bgsave_status:err'), Boolean, { timeoutMs: 5000 });
    expect(await dispatch()).toMatchObject({ status: 503, retryAfter: '2', body: { code: 'STATE_UNAVAILABLE' } });
    rmSync(join(dir, 'dump.rdb'), { recursive: true });
    await admin.bgsave();
    await poll(
      'dispatches to succeed again',
      async () => (await dispatch()).status,
      (s) => s === 200,
      { timeoutMs: 10_000 },
    );
  });
});
