import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, postJson, requestJson, startGateway, type RunningGateway } from '../support/start-gateway.js';

type Body = Record<string, unknown>;
const SCOPE = { namespace: 'orders', tenant: 'acme' };

/** Topics that keep about 50 messages: a subscription that falls further behind than that loses the oldest. */
describe.each(BACKENDS)('a bus topic trimmed at max_len (%s)', (backend) => {
  let gw: RunningGateway;
  const api = (method: string, path: string, body?: unknown) => requestJson(method, `${gw.url}${path}`, body);
  const receive = async (sub: string, max = 100) =>
    ((await api('GET', `/v1/bus/subscriptions/${sub}/messages?consumer=c&max=${max}`)).body as { messages: Body[] }).messages;
  const ack = (sub: string, messages: Body[]) => postJson(`${gw.url}/v1/bus/subscriptions/${sub}/ack`, { message_ids: messages.map((m) => m.message_id) });
  const publishMany = async (topic: string, n: number) => {
    for (let i = 0; i < n; i++) await postJson(`${gw.url}/v1/bus/publish`, { topic, payload: { i } });
  };
  const topic = async (name: string) => {
    await postJson(`${gw.url}/v1/bus/topics`, { ...SCOPE, name });
    return `orders.acme.${name}`;
  };
  const subscribe = async (name: string) => ((await postJson(`${gw.url}/v1/bus/subscriptions`, { topic: name })).body as { id: string }).id;

  beforeAll(async () => {
    gw = await startGateway(backend, { bus: { enabled: true, max_len: 50, visibility_timeout_seconds: 1 } });
  });
  afterAll(() => gw.close());

  it('counts as undelivered only messages the topic still holds (none once read to the end)', async () => {
    const name = await topic('trimmed');
    const sub = await subscribe(name);
    await publishMany(name, 5);
    expect((await ack(sub, await receive(sub))).body).toEqual({ acked: 5 });
    await publishMany(name, 300);
    const held = (await api('GET', `/v1/bus/subscriptions/${sub}/lag`)).body as { undelivered: number; held: number };
    // Everything the topic holds is after the subscription (Redis keeps at least max_len, in whole nodes): trimmed up to it.
    expect(held.undelivered).toBeGreaterThanOrEqual(50);
    expect(held.undelivered).toBeLessThan(300);
    expect(held.held).toBe(held.undelivered);
    let read = 0;
    for (let got = await receive(sub); got.length > 0; got = await receive(sub)) {
      read += got.length;
      await ack(sub, got);
    }
    expect(read).toBe(held.undelivered);
    expect((await api('GET', `/v1/bus/subscriptions/${sub}/lag`)).body).toMatchObject({ pending: 0, undelivered: 0, lag: 0 });
    // And later publishes count one each, not on top of what was trimmed.
    await publishMany(name, 3);
    const after = (await api('GET', `/v1/bus/subscriptions/${sub}/lag`)).body as Body;
    expect(after).toMatchObject({ pending: 0, undelivered: 3, lag: 3 });
    expect(after.held).toBeGreaterThanOrEqual(50);
  });

  it('drops a pending message trimmed away at the next reclaim: not delivered again, not dead-lettered (as docs/bus.md says)', async () => {
    const name = await topic('pending-trimmed');
    const sub = await subscribe(name);
    await publishMany(name, 5);
    const held = await receive(sub);
    expect(held).toHaveLength(5);
    await publishMany(name, 300);
    expect((await api('GET', `/v1/bus/subscriptions/${sub}/lag`)).body).toMatchObject({ pending: 5 });
    await new Promise((r) => setTimeout(r, 1100));
    const next = await receive(sub);
    const ids = new Set(held.map((m) => m.message_id));
    expect(next.length).toBeGreaterThan(0);
    expect(next.filter((m) => ids.has(m.message_id) || m.deliveries !== 1)).toEqual([]);
    expect((await api('GET', `/v1/bus/subscriptions/${sub}/lag`)).body).toMatchObject({ pending: next.length });
    expect((await api('GET', `/v1/bus/subscriptions/${sub}/dead-letters`)).body).toEqual({ messages: [] });
  });
});
