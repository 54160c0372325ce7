import { ManualClock, SluiceError } from '@sluice/core';
import { describe, expect, it } from 'vitest';
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
