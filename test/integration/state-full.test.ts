import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { poll } from '../support/poll.js';
import { startRedisServer, type RunningRedis } from '../support/redis-server.js';
import { rulesDir } from '../support/rules-dir.js';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

/*
 * A state backend that is full refuses what would grow it: Redis at `maxmemory` under
 * `noeviction`, the memory backend at state.memory_max_keys. Either way a dispatch that needs a
 * new key is answered 503 STATE_UNAVAILABLE with Retry-After and executes nothing, and the
 * gateway serves again once there is room.
 */
const DEDUP_TTL_S = 3;
const RULES = `rules:\n  - { name: once, priority: 1, condition: { field: action.action_type, eq: charge }, action: { type: deduplicate, ttl_seconds: ${DEDUP_TTL_S} } }\n`;

describe.each(BACKENDS)('a full state backend (%s)', (backend) => {
  let gw: RunningGateway;
  let sink: HttpSink;
  let redis: RunningRedis | null = null;
  let admin: Redis | null = null;
  const charge = (i: number) =>
    postJson(`${gw.url}/v1/dispatch`, sampleAction({ action_type: 'charge', provider: 'hook', dedup_key: `k-${i}`, payload: { note: 'n'.repeat(2000) } }));

  beforeAll(async () => {
    sink = await startSink();
    if (backend === 'redis') {
      redis = await startRedisServer({ args: ['--maxmemory-policy', 'noeviction'] });
      admin = new Redis(redis.url);
    }
    gw = await startGateway(backend, {
      providers: [{ name: 'hook', type: 'webhook', url: sink.url }],
      rules: { directory: rulesDir({ 'dedup.yaml': RULES }) },
      state: backend === 'memory' ? { memory_max_keys: 200 } : { url: redis?.url },
    });
    if (admin !== null) {
      // Room for a few hundred more records than the started gateway holds.
      const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))?.[1]);
      await admin.config('SET', 'maxmemory', String(used + 1_000_000));
    }
  });
  afterAll(async () => {
    await gw.close();
    await sink.close();
    admin?.disconnect();
    await redis?.stop();
  });

  it('answers 503 STATE_UNAVAILABLE with Retry-After once full, executes nothing it refused, and serves again when there is room', async () => {
    let executed = 0;
    let refused: Awaited<ReturnType<typeof charge>> | undefined;
    for (let i = 0; i < 2000 && refused === undefined; i++) {
      const res = await charge(i);
      if (res.status === 503) refused = res;
      else {
        expect(res.body).toMatchObject({ outcome: 'executed' });
        executed++;
      }
    }
    expect(refused?.body).toMatchObject({ code: 'STATE_UNAVAILABLE' });
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(executed).toBeGreaterThan(0);
    expect(sink.received).toHaveLength(executed);
    expect((await requestJson('GET', `${gw.url}/health`)).status).toBe(200);

    // Room again: the dedup keys expire (the memory backend sweeps them when full); Redis is given more memory.
    if (admin !== null) await admin.config('SET', 'maxmemory', '0');
    await poll('a dispatch to be accepted again', async () => (await charge(10_000)).status === 200, { timeoutMs: (DEDUP_TTL_S + 5) * 1000, intervalMs: 250 });
    expect(sink.received).toHaveLength(executed + 1);
  });
});

/*
 * Pending groups hold their events until they flush, and a flush first moves them to its outbox:
 * a store the groups filled must still let them flush (the memory backend keeps a reserve for
 * that), then free them once sent. Before, every flush was refused, and so was every new key, for
 * good. (Redis at maxmemory has no such reserve: it serves again once it is given memory.)
 */
describe('a memory store filled by pending groups', () => {
  let gw: RunningGateway;
  let sink: HttpSink;
  const GROUP_RULES = `rules:\n  - { name: batch, priority: 1, condition: { field: action.action_type, eq: alert }, action: { type: group, group_by: [payload.k], group_wait_seconds: 1 } }\n`;
  const alert = (k: string) =>
    postJson(`${gw.url}/v1/dispatch`, sampleAction({ action_type: 'alert', provider: 'hook', payload: { k, note: 'n'.repeat(3000) } }));

  beforeAll(async () => {
    sink = await startSink();
    gw = await startGateway('memory', {
      providers: [{ name: 'hook', type: 'webhook', url: sink.url }],
      rules: { directory: rulesDir({ 'groups.yaml': GROUP_RULES }) },
      state: { memory_max_bytes: 200_000 },
    });
  });
  afterAll(async () => {
    await gw.close();
    await sink.close();
  });

  it('flushes them when due, frees their room once sent, and takes new groups again', async () => {
    let grouped = 0;
    let refused = false;
    for (let i = 0; i < 500 && !refused; i++) {
      const res = await alert(`k-${i}`);
      if (res.status === 503) refused = true;
      else {
        expect(res.body).toMatchObject({ outcome: 'grouped' });
        grouped++;
      }
    }
    expect(refused).toBe(true);
    await poll(
      'every group to be notified',
      () => sink.received.length,
      (n) => n === grouped,
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    expect(sink.received.every((call) => call.payload['event_count'] === 1)).toBe(true);
    // The sent notifications no longer hold their events: a group as large as before fits again.
    await poll(
      'a new group to be taken',
      async () => (await alert('after')).status,
      (status) => status === 200,
      { timeoutMs: 10_000, intervalMs: 250 },
    );
  });
});
