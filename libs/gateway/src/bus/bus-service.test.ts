import { ManualClock, SluiceError } from '@sluice/core';
import { renderKey } from '@sluice/state';
import type { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { poll } from '../../../../test/support/poll.js';
import { STATE_BACKENDS, stateStores } from '../../../../test/support/state-backends.js';
import { BusService } from './bus-service.js';
import { topicLog } from './bus-topics.js';

const SCOPE = { namespace: 'orders', tenant: 'acme' };

describe.each(STATE_BACKENDS)('BusService (%s)', (backend) => {
  const stores = stateStores();

  async function service() {
    const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
    const [state] = await stores.open(backend, { clock });
    if (!state) throw new Error('no store');
    const bus = new BusService({ state, clock, maxLen: 100, validatorCacheSize: 10, visibilityTimeoutMs: 1000, maxDeliveries: 3 });
    return { bus, state, clock };
  }

  async function status(p: Promise<unknown>): Promise<number | 'ok'> {
    return p.then(
      () => 'ok' as const,
      (err: unknown) => (err instanceof SluiceError ? err.statusCode : Promise.reject(err)),
    );
  }

  it('a publish holding a topic deleted meanwhile is 404, and leaves nothing behind', async () => {
    const { bus, state } = await service();
    await bus.topics.create({ ...SCOPE, name: 'gone' });
    const read = await bus.topicOf('orders.acme.gone');
    await bus.removeTopic({ ...SCOPE, name: 'gone' });
    expect(await status(bus.publish(read, { topic: read.topic, payload: { old: true } }))).toBe(404);
    expect(await state.logLength(topicLog(read))).toBe(0);
  });

  it('a publish holding a topic deleted and created again meanwhile is 404; the new topic starts empty', async () => {
    const { bus, state, clock } = await service();
    await bus.topics.create({ ...SCOPE, name: 'reused' });
    const read = await bus.topicOf('orders.acme.reused');
    await bus.removeTopic({ ...SCOPE, name: 'reused' });
    clock.advance(1);
    await bus.topics.create({ ...SCOPE, name: 'reused' });
    const fresh = await bus.topicOf('orders.acme.reused');
    await bus.publish(fresh, { topic: fresh.topic, payload: { n: 1 } });
    expect(await status(bus.publish(read, { topic: read.topic, payload: { old: true } }))).toBe(404);
    const kept = await state.logRange(topicLog(fresh), { limit: 10 });
    expect(kept.map((e) => (JSON.parse(e.message) as { payload: unknown }).payload)).toEqual([{ n: 1 }]);
  });
});

describe('BusService on Redis: consumers', () => {
  const stores = stateStores();

  it('forgets the consumers of a subscription that hold nothing once idle (readers under new names), never one holding a message', async () => {
    const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
    const [state] = await stores.open('redis', { clock });
    if (!state) throw new Error('no store');
    const { client } = state as unknown as { client: Redis };
    const bus = new BusService({
      state,
      clock,
      maxLen: 100,
      validatorCacheSize: 10,
      visibilityTimeoutMs: 60_000,
      maxDeliveries: 3,
      forgetIdleConsumersAfterMs: 200,
    });
    await bus.topics.create({ ...SCOPE, name: 'pods' });
    const topic = await bus.topicOf('orders.acme.pods');
    const sub = await bus.subscribe(topic, { topic: topic.topic, from: 'earliest' });
    for (let i = 0; i < 3; i++) await bus.publish(topic, { topic: topic.topic, payload: { i } });
    const subscriptions = bus.subscriptions;
    // Pods of earlier deploys: one read and acknowledged, one still holds its message.
    const [gone] = await subscriptions.receive(sub, 'pod-old', 1, 0);
    await subscriptions.ack(sub, [gone?.message_id ?? '']);
    await subscriptions.receive(sub, 'pod-holding', 1, 0);
    // The store's prefix is its own: find the topic's stream by the rest of its name.
    const [stream] = await client.keys(`*${renderKey('', topicLog(topic))}`);
    const consumers = async () => ((await client.xinfo('CONSUMERS', stream ?? '', sub.id)) as string[][]).map((c) => c[1]).sort();
    expect(await consumers()).toEqual(['pod-holding', 'pod-old']);
    await sleep(250);
    // The next receive, of a pod of this deploy, forgets in the background what is idle and empty.
    expect((await subscriptions.receive(sub, 'pod-new', 1, 0)).map((m) => m.payload)).toEqual([{ i: 2 }]);
    await poll('pod-old forgotten', consumers, (names) => !names.includes('pod-old'), { timeoutMs: 5000, intervalMs: 50 });
    expect(await consumers()).toEqual(['pod-holding', 'pod-new']);
  });
});
