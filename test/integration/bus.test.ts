import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, WILDCARD_GRANT } from '../support/credentials.js';
import { freePort } from '../support/free-port.js';
import { openStream } from '../support/sse-client.js';
import { uniquePrefix } from '../support/redis-url.js';
import { spawnSluice } from '../support/sluice-process.js';
import { BACKENDS, postJson, requestJson, startGateway, type RunningGateway } from '../support/start-gateway.js';

type Body = Record<string, unknown>;
const SCOPE = { namespace: 'orders', tenant: 'acme' };
/** Fifteen integer fields: a payload of fifteen strings breaks every one. */
const FIFTEEN = {
  type: 'object',
  properties: Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`f${i}`, { type: 'integer' }])),
};

/** Every bus route, with a body where it takes one: all must answer 503 while the bus is off. */
const ROUTES: [string, string, Body?][] = [
  ['POST', '/v1/bus/schemas', { ...SCOPE, subject: 's', body: {} }],
  ['GET', '/v1/bus/schemas'],
  ['GET', '/v1/bus/schemas/orders/acme/s'],
  ['GET', '/v1/bus/schemas/orders/acme/s/1'],
  ['DELETE', '/v1/bus/schemas/orders/acme/s/1'],
  ['POST', '/v1/bus/topics', { ...SCOPE, name: 't' }],
  ['GET', '/v1/bus/topics'],
  ['DELETE', '/v1/bus/topics/orders/acme/t'],
  ['PUT', '/v1/bus/topics/orders/acme/t/schema', { subject: 's', version: 1 }],
  ['DELETE', '/v1/bus/topics/orders/acme/t/schema'],
  ['POST', '/v1/bus/publish', { topic: 'orders.acme.t', payload: {} }],
  ['POST', '/v1/bus/subscriptions', { topic: 'orders.acme.t' }],
  ['GET', '/v1/bus/subscriptions/x'],
  ['GET', '/v1/bus/subscriptions/x/messages?consumer=c'],
  ['POST', '/v1/bus/subscriptions/x/ack', { message_ids: ['1-0'] }],
  ['GET', '/v1/bus/subscriptions/x/lag'],
  ['GET', '/v1/bus/subscriptions/x/dead-letters'],
];

describe.each(BACKENDS)('message bus (%s)', (backend) => {
  let gw: RunningGateway;
  const api = (method: string, path: string, body?: unknown) => requestJson(method, `${gw.url}${path}`, body);
  const register = (subject: string, body: unknown) => postJson(`${gw.url}/v1/bus/schemas`, { ...SCOPE, subject, body });
  const publish = (topic: string, payload: unknown) => postJson(`${gw.url}/v1/bus/publish`, { topic, payload });

  beforeAll(async () => {
    gw = await startGateway(backend, { bus: { enabled: true } });
  });
  afterAll(() => gw.close());

  it('registers versions 1, 2… of a subject; a body that does not compile is 400 with the compiler’s message', async () => {
    const first = await register('order', { type: 'object', required: ['id'] });
    expect(first).toMatchObject({ status: 201, body: { subject: 'order', version: 1, ...SCOPE, format: 'json_schema_2020_12', labels: {} } });
    expect((await register('order', { type: 'object' })).body).toMatchObject({ version: 2 });
    const bad = await register('order', { type: 'not-a-type' });
    expect(bad.status).toBe(400);
    expect(bad.body?.error).toMatch(/schema body does not compile: .*type/);
    const versions = ((await api('GET', '/v1/bus/schemas/orders/acme/order')).body?.schemas ?? []) as Body[];
    expect(versions.map((s) => s.version)).toEqual([1, 2]);
    expect((await api('GET', '/v1/bus/schemas/orders/acme/order/2')).body).toMatchObject({ version: 2, body: { type: 'object' } });
    expect((await api('GET', '/v1/bus/schemas/orders/acme/order/9')).status).toBe(404);
    expect((await api('GET', '/v1/bus/schemas?subject=order')).body).toMatchObject({ count: 2 });
    // A dotted tenant can have no topic to bind a schema to, so it cannot register one either.
    const dotted = await postJson(`${gw.url}/v1/bus/schemas`, { ...SCOPE, tenant: 'acme.eu', subject: 'order', body: { type: 'object' } });
    expect(dotted).toMatchObject({ status: 400, body: { code: 'BAD_REQUEST' } });
    expect((await api('GET', '/v1/bus/schemas/orders/acme.eu/order')).body?.schemas ?? []).toEqual([]);
  });

  it('validates publishes to a bound topic: at most 10 issues, JSON Pointer paths, "" for the root', async () => {
    await register('fifteen', FIFTEEN);
    expect((await postJson(`${gw.url}/v1/bus/topics`, { ...SCOPE, name: 'checked' })).status).toBe(201);
    expect((await postJson(`${gw.url}/v1/bus/topics`, { ...SCOPE, name: 'checked' })).status).toBe(409);
    const bound = await api('PUT', '/v1/bus/topics/orders/acme/checked/schema', { subject: 'fifteen', version: 1 });
    expect(bound).toMatchObject({ status: 200, body: { topic: 'orders.acme.checked', subject: 'fifteen', version: 1 } });

    const ok = await publish('orders.acme.checked', { f0: 1 });
    expect(ok).toMatchObject({ status: 201, body: { topic: 'orders.acme.checked', validated: true, subject: 'fifteen', version: 1 } });
    expect(ok.body?.message_id).toMatch(/^\d+-\d+$/);

    const many = await publish('orders.acme.checked', Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`f${i}`, 'x'])));
    expect(many.status).toBe(400);
    expect(many.body).toMatchObject({ subject: 'fifteen', version: 1, error: expect.stringContaining('does not match') });
    const issues = many.body?.issues as { path: string; message: string }[];
    expect(issues).toHaveLength(10);
    for (const issue of issues) expect(issue.path).toMatch(/^\/f\d+$/);
    expect(issues[0]).toEqual({ path: '/f0', message: 'must be integer' });

    const root = await publish('orders.acme.checked', ['not', 'an', 'object']);
    expect(root.status).toBe(400);
    expect(root.body?.issues).toEqual([{ path: '', message: 'must be object' }]);
  });

  it('refuses to delete a pinned version (409); after unbinding, publishes go unvalidated and the version can go', async () => {
    expect((await api('DELETE', '/v1/bus/schemas/orders/acme/fifteen/1')).status).toBe(409);
    expect((await api('DELETE', '/v1/bus/topics/orders/acme/checked/schema')).status).toBe(204);
    expect((await publish('orders.acme.checked', { f0: 'anything' })).body).toMatchObject({ validated: false, subject: null, version: null });
    expect((await api('DELETE', '/v1/bus/schemas/orders/acme/fifteen/1')).status).toBe(204);
    expect((await api('GET', '/v1/bus/schemas/orders/acme/fifteen/1')).status).toBe(404);
    // A deleted version's number is not given again.
    expect((await register('fifteen', FIFTEEN)).body).toMatchObject({ version: 2 });
  });

  it('runs schema patterns on RE2: a catastrophic pattern stays linear, a lookahead does not compile', async () => {
    expect((await register('lookahead', { type: 'string', pattern: '^(?=a)a$' })).status).toBe(400);
    await register('catastrophic', { type: 'string', pattern: '^(a+)+$' });
    await postJson(`${gw.url}/v1/bus/topics`, { ...SCOPE, name: 'patterned' });
    await api('PUT', '/v1/bus/topics/orders/acme/patterned/schema', { subject: 'catastrophic', version: 1 });
    const started = Date.now();
    const res = await publish('orders.acme.patterned', `${'a'.repeat(40)}!`);
    expect(res.body?.issues).toEqual([{ path: '', message: 'must match pattern "^(a+)+$"' }]);
    expect(Date.now() - started).toBeLessThan(2000); // a backtracking engine takes minutes on this input
    expect((await publish('orders.acme.patterned', 'aaaa')).status).toBe(201);
  });

  it('bounds schema patterns as rule regexes are: an oversized one is refused, and the pattern checks of one payload share a scan budget', async () => {
    const huge = await register('huge', { type: 'string', pattern: '[a-z]{1000}'.repeat(20) });
    expect(huge.status).toBe(400);
    expect(huge.body?.error).toMatch(/instructions, over the limit of 1000/);
    expect((await register('lettered', { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' } })).status).toBe(201);
    await postJson(`${gw.url}/v1/bus/topics`, { ...SCOPE, name: 'lettered' });
    await api('PUT', '/v1/bus/topics/orders/acme/lettered/schema', { subject: 'lettered', version: 1 });
    expect((await publish('orders.acme.lettered', ['abc', 'def'])).status).toBe(201);
    const started = Date.now();
    const flood = await publish(
      'orders.acme.lettered',
      Array.from({ length: 200 }, () => 'a'.repeat(4000)),
    );
    expect(Date.now() - started).toBeLessThan(1500);
    expect(flood.status).toBe(400);
    expect(flood.body?.issues).toEqual([{ path: '', message: expect.stringMatching(/patterns would scan more than 3000000 instruction-characters/) }]);
    expect((await api('DELETE', '/v1/bus/topics/orders/acme/lettered/schema')).status).toBe(204);
    expect((await api('DELETE', '/v1/bus/topics/orders/acme/lettered')).status).toBe(204);
  });

  it('refuses an asynchronous schema (400), and checks uniqueItems in linear time', async () => {
    const async = await register('async', { $async: true, type: 'object', required: ['id'] });
    expect(async.status).toBe(400);
    expect(async.body?.error).toMatch(/\$async/);
    await register('unique', { type: 'array', uniqueItems: true });
    await postJson(`${gw.url}/v1/bus/topics`, { ...SCOPE, name: 'unique' });
    await api('PUT', '/v1/bus/topics/orders/acme/unique/schema', { subject: 'unique', version: 1 });
    const items = Array.from({ length: 20_000 }, (_, i) => ({ a: i, b: { c: [i] } }));
    const started = Date.now();
    expect((await publish('orders.acme.unique', items)).status).toBe(201);
    expect(Date.now() - started).toBeLessThan(2000); // Ajv's pairwise comparison took 6 s on this input
    // Deep equality, whatever the keys' order.
    const twice = await publish('orders.acme.unique', [{ a: 1, b: 2 }, 'x', { b: 2, a: 1 }]);
    expect(twice.status).toBe(400);
    expect(twice.body?.issues).toEqual([{ path: '', message: 'must NOT have duplicate items (items ## 0 and 2 are identical)' }]);
    expect((await publish('orders.acme.unique', [1, '1', [1], { a: 1 }])).status).toBe(201);
    // An issue points at the array that holds the duplicates.
    await register('nested', { type: 'object', properties: { deep: { type: 'object', properties: { xs: { type: 'array', uniqueItems: true } } } } });
    await postJson(`${gw.url}/v1/bus/topics`, { ...SCOPE, name: 'nested' });
    await api('PUT', '/v1/bus/topics/orders/acme/nested/schema', { subject: 'nested', version: 1 });
    expect((await publish('orders.acme.nested', { deep: { xs: [1, 1] } })).body?.issues).toEqual([
      { path: '/deep/xs', message: 'must NOT have duplicate items (items ## 0 and 1 are identical)' },
    ]);
  });

  it('refuses a topic whose namespace or tenant has a dot (its name would be ambiguous)', async () => {
    expect((await postJson(`${gw.url}/v1/bus/topics`, { namespace: 'a.b', tenant: 'c', name: 'd' })).status).toBe(400);
  });

  it('answers 404 for unknown topics and bindings to unknown versions; lists and deletes topics', async () => {
    expect((await publish('orders.acme.nowhere', {})).status).toBe(404);
    expect((await api('PUT', '/v1/bus/topics/orders/acme/checked/schema', { subject: 'missing', version: 1 })).status).toBe(404);
    expect((await api('GET', '/v1/bus/topics?tenant=acme')).body).toMatchObject({ count: 4 });
    const sub = ((await postJson(`${gw.url}/v1/bus/subscriptions`, { topic: 'orders.acme.checked' })).body as { id: string }).id;
    expect((await api('DELETE', '/v1/bus/topics/orders/acme/checked')).status).toBe(204);
    expect((await publish('orders.acme.checked', {})).status).toBe(404);
    // Its subscriptions went with its stream.
    expect((await api('GET', `/v1/bus/subscriptions/${sub}/lag`)).status).toBe(404);
    expect((await api('GET', `/v1/bus/subscriptions/${sub}`)).status).toBe(404);
  });
});

describe.each(BACKENDS)('bus subscriptions (%s)', (backend) => {
  let gw: RunningGateway;
  const api = (method: string, path: string, body?: unknown) => requestJson(method, `${gw.url}${path}`, body);
  const publish = (payload: unknown) => postJson(`${gw.url}/v1/bus/publish`, { topic: 'orders.acme.events', payload });
  const receive = async (sub: string, consumer: string, extra = '') =>
    ((await api('GET', `/v1/bus/subscriptions/${sub}/messages?consumer=${consumer}${extra}`)).body as { messages: Body[] }).messages;
  const lag = async (sub: string) => (await api('GET', `/v1/bus/subscriptions/${sub}/lag`)).body;
  const subscribe = async (from = 'latest') =>
    ((await postJson(`${gw.url}/v1/bus/subscriptions`, { topic: 'orders.acme.events', from })).body as { id: string }).id;

  beforeAll(async () => {
    gw = await startGateway(backend, { bus: { enabled: true, visibility_timeout_seconds: 1, max_deliveries: 2 } });
    await postJson(`${gw.url}/v1/bus/topics`, { ...SCOPE, name: 'events' });
  });
  afterAll(() => gw.close());

  it('hands each message to one consumer; lag counts what is not acknowledged', async () => {
    await publish({ n: 0 });
    const sub = await subscribe();
    expect((await postJson(`${gw.url}/v1/bus/subscriptions`, { topic: 'orders.acme.nowhere' })).status).toBe(404);
    for (const n of [1, 2, 3]) await publish({ n });
    const first = await receive(sub, 'c1', '&max=2');
    expect(first.map((m) => [(m.payload as Body).n, m.deliveries])).toEqual([
      [1, 1],
      [2, 1],
    ]);
    expect(await lag(sub)).toMatchObject({ pending: 2, undelivered: 1, lag: 3 });
    expect((await receive(sub, 'c2')).map((m) => (m.payload as Body).n)).toEqual([3]);
    expect((await postJson(`${gw.url}/v1/bus/subscriptions/${sub}/ack`, { message_ids: first.map((m) => m.message_id) })).body).toEqual({ acked: 2 });
    expect(await lag(sub)).toMatchObject({ pending: 1, undelivered: 0, lag: 1 });
    // From the earliest: what the topic already held.
    expect((await receive(await subscribe('earliest'), 'c1', '&max=100')).map((m) => (m.payload as Body).n)).toEqual([0, 1, 2, 3]);
  });

  it('refuses a message id whose parts do not fit in 64 bits (400 on both backends, as Redis would refuse it)', async () => {
    const sub = await subscribe();
    const ack = (ids: string[]) => postJson(`${gw.url}/v1/bus/subscriptions/${sub}/ack`, { message_ids: ids });
    for (const id of ['18446744073709551616-0', '1-18446744073709551616', '99999999999999999999-0', '123456789012345678901-0']) {
      expect(await ack([id]), id).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
    }
    expect(await ack(['18446744073709551615-18446744073709551615', '0-0'])).toMatchObject({ status: 200, body: { acked: 0 } });
  });

  it('redelivers what a consumer left unacknowledged to another after the visibility timeout, then dead-letters it after max_deliveries', async () => {
    const sub = await subscribe();
    await publish({ n: 'lost' });
    const [taken] = await receive(sub, 'dies');
    expect(await receive(sub, 'other')).toEqual([]);
    await new Promise((r) => setTimeout(r, 1100));
    const [again] = await receive(sub, 'other');
    expect(again).toMatchObject({ message_id: taken?.message_id, deliveries: 2, payload: { n: 'lost' } });
    await new Promise((r) => setTimeout(r, 1100));
    expect(await receive(sub, 'third')).toEqual([]);
    const dead = (await api('GET', `/v1/bus/subscriptions/${sub}/dead-letters`)).body as { messages: Body[] };
    expect(dead.messages).toEqual([expect.objectContaining({ message_id: taken?.message_id, deliveries: 2, payload: { n: 'lost' } })]);
    expect(await lag(sub)).toMatchObject({ lag: 0 });
  });

  it('hands a poll that did not ack in time its own messages again (deliveries counts it)', async () => {
    const sub = await subscribe();
    await publish({ n: 'slow' });
    const [taken] = await receive(sub, 'slow');
    await new Promise((r) => setTimeout(r, 1100));
    expect(await receive(sub, 'slow')).toEqual([expect.objectContaining({ message_id: taken?.message_id, deliveries: 2 })]);
  });

  it('never sends an open stream its own messages again, nor dead-letters them while it is open; once it closes they go on', async () => {
    const sub = await subscribe();
    const stream = await openStream(`${gw.url}/v1/bus/subscriptions/${sub}/messages?consumer=streamer`);
    try {
      for (let n = 0; n < 12; n++) await publish({ n });
      await stream.next((f) => (f.data['payload'] as Body | undefined)?.n === 11);
      // Past max_deliveries (2) visibility timeouts (1 s), unacknowledged.
      await new Promise((r) => setTimeout(r, 3300));
      const sent = stream.frames.filter((f) => f.event === 'message');
      expect(sent.map((f) => (f.data['payload'] as Body).n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      expect(sent.every((f) => f.data['deliveries'] === 1)).toBe(true);
      expect((await api('GET', `/v1/bus/subscriptions/${sub}/dead-letters`)).body).toEqual({ messages: [] });
      expect(await lag(sub)).toMatchObject({ pending: 12, undelivered: 0 });
      // Acknowledged from the stream's frames, as a client does.
      const acked = await postJson(`${gw.url}/v1/bus/subscriptions/${sub}/ack`, { message_ids: sent.slice(0, 10).map((f) => f.id) });
      expect(acked.body).toEqual({ acked: 10 });
    } finally {
      stream.close();
    }
    // Gone, the stream's unacknowledged messages go to the next consumer after the visibility timeout.
    expect((await receive(sub, 'after', '&max=10')).map((m) => [(m.payload as Body).n, m.deliveries])).toEqual([
      [10, 2],
      [11, 2],
    ]);
  });

  it('long-polls until a message arrives, and streams messages as server-sent events', async () => {
    const sub = await subscribe();
    const polled = receive(sub, 'waiter', '&wait_seconds=5');
    await new Promise((r) => setTimeout(r, 300));
    await publish({ n: 'late' });
    expect((await polled).map((m) => m.payload)).toEqual([{ n: 'late' }]);

    const stream = await openStream(`${gw.url}/v1/bus/subscriptions/${sub}/messages?consumer=streamer`);
    try {
      await publish({ n: 'streamed' });
      const frame = await stream.next((f) => f.event === 'message');
      expect(frame.data).toMatchObject({ payload: { n: 'streamed' }, deliveries: 1 });
      expect(frame.id).toBe(frame.data['message_id']);
    } finally {
      stream.close();
    }
  });
});

describe.each(BACKENDS)('a long poll while the server closes (%s)', (backend) => {
  it('is answered at once, empty, its connection closed: it does not hold the shutdown for its wait', async () => {
    const gw = await startGateway(backend, { bus: { enabled: true } });
    await postJson(`${gw.url}/v1/bus/topics`, { ...SCOPE, name: 'closing' });
    const sub = ((await postJson(`${gw.url}/v1/bus/subscriptions`, { topic: 'orders.acme.closing' })).body as { id: string }).id;
    const polled = requestJson('GET', `${gw.url}/v1/bus/subscriptions/${sub}/messages?consumer=c&wait_seconds=20`);
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    const answered = polled.then((answer) => ({ answer, afterMs: Date.now() - started }));
    gw.readiness.startClosing(); // as the shutdown does (compose.ts), before the app closes
    await gw.close();
    const { answer, afterMs } = await answered;
    expect(afterMs).toBeLessThan(3_000);
    expect(answer).toMatchObject({ status: 200, body: { messages: [] } });
    expect(answer.headers.get('connection')).toBe('close');
  });
});

describe('message bus off', () => {
  it('answers 503 on every bus route', async () => {
    const gw = await startGateway('memory');
    try {
      for (const [method, path, body] of ROUTES) {
        const res = await requestJson(method, `${gw.url}${path}`, body);
        expect(res, `${method} ${path}`).toMatchObject({ status: 503, body: { code: 'FEATURE_DISABLED', error: 'message bus is not enabled' } });
      }
    } finally {
      await gw.close();
    }
  });

  it('is turned on by the environment (SLUICE_BUS__ENABLED=true)', async () => {
    const port = await freePort();
    const proc = await spawnSluice(['serve', '--port', String(port), '--host', '127.0.0.1'], { port, env: { SLUICE_BUS__ENABLED: 'true' } });
    try {
      expect((await postJson(`${proc.url}/v1/bus/schemas`, { ...SCOPE, subject: 's', body: {} })).status).toBe(201);
    } finally {
      proc.kill('SIGTERM');
      await proc.exited;
    }
  });
});

describe('message bus shared by two replicas (redis)', () => {
  const prefix = uniquePrefix();
  const config = { bus: { enabled: true }, state: { prefix } };
  let a: RunningGateway;
  let b: RunningGateway;

  beforeAll(async () => {
    a = await startGateway('redis', config);
    b = await startGateway('redis', config);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it('10 concurrent registrations of one subject on two replicas get versions 1..10, each once', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => postJson(`${(i % 2 ? a : b).url}/v1/bus/schemas`, { ...SCOPE, subject: 'raced', body: { type: 'object' } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(results.map((r) => r.body?.version as number).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('a bind racing the delete of its version on the other replica: never a topic bound to a deleted version', async () => {
    const pairs = Array.from({ length: 20 }, (_, i) => i);
    for (const i of pairs) {
      await postJson(`${a.url}/v1/bus/schemas`, { ...SCOPE, subject: `rs${i}`, body: { type: 'object' } });
      await postJson(`${a.url}/v1/bus/topics`, { ...SCOPE, name: `rt${i}` });
    }
    const answers = await Promise.all(
      pairs.map(async (i) => {
        const [bound, deleted] = await Promise.all([
          requestJson('PUT', `${a.url}/v1/bus/topics/orders/acme/rt${i}/schema`, { subject: `rs${i}`, version: 1 }),
          requestJson('DELETE', `${b.url}/v1/bus/schemas/orders/acme/rs${i}/1`),
        ]);
        return [bound.status, deleted.status];
      }),
    );
    // One of the two won each race: bound (and the delete 409) or deleted (and the bind 404).
    for (const pair of answers) expect([JSON.stringify([200, 409]), JSON.stringify([404, 204])]).toContain(JSON.stringify(pair));
    const topics = ((await requestJson('GET', `${a.url}/v1/bus/topics?namespace=orders&tenant=acme`)).body?.topics ?? []) as Body[];
    const raced = topics.filter((t) => String(t.topic).includes('.rt'));
    expect(raced).toHaveLength(20);
    for (const topic of raced) {
      if (topic.schema_subject === null) continue;
      expect((await requestJson('GET', `${a.url}/v1/bus/schemas/orders/acme/${String(topic.schema_subject)}/1`)).status).toBe(200);
    }
  });

  it('a topic deleted on one replica while subscriptions to it are created on both leaves none of them', async () => {
    const subscribe = (gw: RunningGateway, at: number) =>
      new Promise((r) => setTimeout(r, at)).then(() => postJson(`${gw.url}/v1/bus/subscriptions`, { topic: 'orders.acme.fleeting' }));
    for (let round = 0; round < 5; round++) {
      expect((await postJson(`${a.url}/v1/bus/topics`, { ...SCOPE, name: 'fleeting' })).status).toBe(201);
      // Subscriptions spread over 40 ms on both replicas, the delete in the middle of them.
      const answers = Promise.all(Array.from({ length: 40 }, (_, i) => subscribe(i % 2 ? a : b, i)));
      const deleted = new Promise((r) => setTimeout(r, 20)).then(() => requestJson('DELETE', `${b.url}/v1/bus/topics/orders/acme/fleeting`));
      expect((await deleted).status).toBe(204);
      const settled = await answers;
      expect(settled.every((r) => r.status === 201 || r.status === 404)).toBe(true);
      const ids = settled.filter((r) => r.status === 201).map((r) => (r.body as { id: string }).id);
      const left = [];
      for (const id of ids) if ((await requestJson('GET', `${a.url}/v1/bus/subscriptions/${id}`)).status !== 404) left.push(id);
      expect(left, `round ${round}`).toEqual([]);
    }
  });

  it('a subscriber on replica A receives what replica B published', async () => {
    await postJson(`${a.url}/v1/bus/topics`, { ...SCOPE, name: 'shared' });
    const sub = ((await postJson(`${a.url}/v1/bus/subscriptions`, { topic: 'orders.acme.shared' })).body as { id: string }).id;
    await postJson(`${b.url}/v1/bus/publish`, { topic: 'orders.acme.shared', payload: { from: 'b' } });
    const got = (await requestJson('GET', `${a.url}/v1/bus/subscriptions/${sub}/messages?consumer=c`)).body as { messages: Body[] };
    expect(got.messages.map((m) => m.payload)).toEqual([{ from: 'b' }]);
  });

  it('a binding made on one replica validates on another, and after a restart', async () => {
    await postJson(`${a.url}/v1/bus/schemas`, { ...SCOPE, subject: 'strict', body: { type: 'object', required: ['id'] } });
    await postJson(`${a.url}/v1/bus/topics`, { ...SCOPE, name: 'kept' });
    await requestJson('PUT', `${a.url}/v1/bus/topics/orders/acme/kept/schema`, { subject: 'strict', version: 1 });
    expect((await postJson(`${b.url}/v1/bus/publish`, { topic: 'orders.acme.kept', payload: {} })).status).toBe(400);
    await b.close();
    b = await startGateway('redis', config);
    expect((await postJson(`${b.url}/v1/bus/publish`, { topic: 'orders.acme.kept', payload: {} })).body?.issues).toEqual([
      { path: '', message: "must have required property 'id'" },
    ]);
    expect((await postJson(`${b.url}/v1/bus/publish`, { topic: 'orders.acme.kept', payload: { id: 1 } })).status).toBe(201);
  });
});

describe.each(BACKENDS)('message bus under grants (%s)', (backend) => {
  let gw: RunningGateway;
  beforeAll(async () => {
    const grant = { namespaces: ['orders'], providers: ['bus'], actions: ['*'] };
    const { file } = credentialsFile({
      keys: [
        { name: 'root', role: 'admin', grants: [WILDCARD_GRANT] },
        { name: 'acme-op', role: 'operator', grants: [{ ...grant, tenants: ['acme'] }] },
        // May publish to acme's topics, nothing more.
        { name: 'acme-publisher', role: 'operator', grants: [{ ...grant, tenants: ['acme'], actions: ['publish'] }] },
      ],
    });
    gw = await startGateway(backend, { bus: { enabled: true }, auth: { enabled: true, file } });
    expect((await postJson(`${gw.url}/v1/bus/topics`, { namespace: 'orders', tenant: 'globex', name: 'payroll' }, keyHeader('root'))).status).toBe(201);
  });
  afterAll(() => gw.close());

  it('checks the topic’s tenant before looking it up: another tenant’s topic is 403 whether it exists or not', async () => {
    for (const [path, action] of [
      ['/v1/bus/publish', { payload: {} }],
      ['/v1/bus/subscriptions', {}],
    ] as const) {
      for (const topic of ['orders.globex.payroll', 'orders.globex.nothere']) {
        const res = await postJson(`${gw.url}${path}`, { topic, ...action }, keyHeader('acme-op'));
        expect(res).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
      }
      // Its own tenant's missing topic is a plain 404.
      expect((await postJson(`${gw.url}${path}`, { topic: 'orders.acme.nothere', ...action }, keyHeader('acme-op'))).status).toBe(404);
    }
    expect((await postJson(`${gw.url}/v1/bus/publish`, { topic: 'orders.globex.payroll', payload: {} }, keyHeader('root'))).status).toBe(201);
  });

  it('manages topics and bindings with a bus grant for manage, schemas for schema: a publish-only key can do neither', async () => {
    const as = (name: string) => keyHeader(name);
    const scope = { namespace: 'orders', tenant: 'acme' };
    expect((await postJson(`${gw.url}/v1/bus/topics`, { ...scope, name: 'guarded' }, as('acme-op'))).status).toBe(201);
    expect((await postJson(`${gw.url}/v1/bus/schemas`, { ...scope, subject: 'g', body: { type: 'object' } }, as('acme-op'))).status).toBe(201);
    expect((await requestJson('PUT', `${gw.url}/v1/bus/topics/orders/acme/guarded/schema`, { subject: 'g', version: 1 }, as('acme-op'))).status).toBe(200);
    const refused = [
      await requestJson('DELETE', `${gw.url}/v1/bus/topics/orders/acme/guarded/schema`, undefined, as('acme-publisher')),
      await requestJson('PUT', `${gw.url}/v1/bus/topics/orders/acme/guarded/schema`, { subject: 'g', version: 1 }, as('acme-publisher')),
      await requestJson('DELETE', `${gw.url}/v1/bus/topics/orders/acme/guarded`, undefined, as('acme-publisher')),
      await postJson(`${gw.url}/v1/bus/topics`, { ...scope, name: 'other' }, as('acme-publisher')),
      await postJson(`${gw.url}/v1/bus/schemas`, { ...scope, subject: 'g', body: true }, as('acme-publisher')),
      await requestJson('DELETE', `${gw.url}/v1/bus/schemas/orders/acme/g/1`, undefined, as('acme-publisher')),
    ];
    expect(refused.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403]);
    // Nothing changed: the binding still validates, and the publisher may publish.
    expect((await postJson(`${gw.url}/v1/bus/publish`, { topic: 'orders.acme.guarded', payload: 'garbage' }, as('acme-publisher'))).status).toBe(400);
    expect((await postJson(`${gw.url}/v1/bus/publish`, { topic: 'orders.acme.guarded', payload: {} }, as('acme-publisher'))).status).toBe(201);
  });

  it('answers 404 for a subscription whose topic the caller may not subscribe to, as for one that does not exist', async () => {
    expect((await postJson(`${gw.url}/v1/bus/topics`, { namespace: 'orders', tenant: 'acme', name: 'watched' }, keyHeader('acme-op'))).status).toBe(201);
    const sub = (await postJson(`${gw.url}/v1/bus/subscriptions`, { topic: 'orders.acme.watched' }, keyHeader('acme-op'))).body as { id: string };
    expect((await requestJson('GET', `${gw.url}/v1/bus/subscriptions/${sub.id}`, undefined, keyHeader('acme-op'))).status).toBe(200);
    // The publisher's grant covers acme but not subscribing: a 403 would tell the id exists.
    for (const path of [sub.id, `${sub.id}/lag`, 'no-such-subscription']) {
      const res = await requestJson('GET', `${gw.url}/v1/bus/subscriptions/${path}`, undefined, keyHeader('acme-publisher'));
      expect(res).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    }
  });

  it('takes no message on HEAD: receiving has no HEAD twin', async () => {
    const sub = (await postJson(`${gw.url}/v1/bus/subscriptions`, { topic: 'orders.globex.payroll' }, keyHeader('root'))).body as { id: string };
    expect((await postJson(`${gw.url}/v1/bus/publish`, { topic: 'orders.globex.payroll', payload: { n: 1 } }, keyHeader('root'))).status).toBe(201);
    const messages = `${gw.url}/v1/bus/subscriptions/${sub.id}/messages?consumer=c`;
    const head = await fetch(messages, { method: 'HEAD', headers: keyHeader('root'), signal: AbortSignal.timeout(3000) });
    expect(head.status).toBe(404);
    // The message is still there for a real receive.
    const got = await requestJson('GET', messages, undefined, keyHeader('root'));
    expect(got).toMatchObject({ status: 200, body: { messages: [expect.objectContaining({ message_id: expect.any(String), deliveries: 1 })] } });
  });
});
