import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiServer, type OpenAiServer } from '../support/openai-server.js';
import { rulesDir } from '../support/rules-dir.js';
import { uniquePrefix } from '../support/redis-url.js';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const RULES = `
rules:
  - name: billing-talk
    priority: 1
    condition: { semantic_match: billing, threshold: 0.8, text_field: payload.message }
    action: { type: suppress, reason: billing goes elsewhere }
`;

type Counters = Record<'text_cache_hits' | 'topic_cache_hits' | 'fail_open_count' | 'errors', number>;
const embeddingCounters = async (url: string) => ((await requestJson('GET', `${url}/health`)).body as { metrics: { embedding: Counters } }).metrics.embedding;

function vectors(server: OpenAiServer): void {
  server.vectors.set('billing', [1, 0, 0]);
  server.vectors.set('my invoice is wrong', [0.9, 0.2, 0]); // cosine ≈ 0.976
  server.vectors.set('nice weather', [0.2, 1, 0]); // cosine ≈ 0.196
}

describe.each(BACKENDS)('semantic_match and embeddings (%s)', (backend) => {
  let gw: RunningGateway;
  let strict: RunningGateway;
  let server: OpenAiServer;
  const dispatch = async (target: RunningGateway, message: string) =>
    (await postJson(`${target.url}/v1/dispatch`, sampleAction({ payload: { message } }))).body as { outcome: string; rule?: string; error?: { code: string } };

  beforeAll(async () => {
    server = await startOpenAiServer();
    vectors(server);
    const base = { rules: { directory: rulesDir({ 'semantic.yaml': RULES }) } };
    gw = await startGateway(backend, { ...base, embedding: { enabled: true, endpoint: server.url, api_key: 'sk-local', timeout_seconds: 2 } });
    strict = await startGateway(backend, { ...base, embedding: { enabled: true, endpoint: server.url, fail_open: false, timeout_seconds: 2 } });
  });
  afterAll(async () => {
    await gw.close();
    await strict.close();
    await server.close();
  });

  it('matches above the threshold and not below; the key goes to the server as a bearer token', async () => {
    expect(await dispatch(gw, 'my invoice is wrong')).toMatchObject({ outcome: 'suppressed', rule: 'billing-talk' });
    expect((await dispatch(gw, 'nice weather')).outcome).toBe('executed');
    const call = server.calls.find((c) => c.path === '/embeddings');
    expect(call?.authorization).toBe('Bearer sk-local');
    expect(call?.body).toMatchObject({ model: 'text-embedding-3-small' });
  });

  it('serves a repeated text and topic from its caches', async () => {
    const before = await embeddingCounters(gw.url);
    const calls = server.calls.length;
    await dispatch(gw, 'my invoice is wrong');
    const after = await embeddingCounters(gw.url);
    expect(after.text_cache_hits).toBe(before.text_cache_hits + 1);
    expect(after.topic_cache_hits).toBe(before.topic_cache_hits + 1);
    expect(server.calls.length).toBe(calls);
  });

  it('with the server down: fail_open gives similarity 0 (no match) and counts it; without, the dispatch fails', async () => {
    server.status = 503;
    try {
      const before = await embeddingCounters(gw.url);
      expect((await dispatch(gw, 'a text never seen')).outcome).toBe('executed');
      const after = await embeddingCounters(gw.url);
      expect(after.fail_open_count).toBe(before.fail_open_count + 1);
      expect(after.errors).toBeGreaterThan(before.errors);
      expect(await dispatch(strict, 'another text never seen')).toMatchObject({ outcome: 'failed', error: { code: 'EMBEDDING_FAILED' } });
    } finally {
      server.status = 200;
    }
  });

  it('POST /v1/embeddings/similarity answers the cosine, 500 when the provider fails', async () => {
    const res = await postJson(`${strict.url}/v1/embeddings/similarity`, { text: 'my invoice is wrong', topic: 'billing' });
    expect(res.status).toBe(200);
    expect(res.body?.similarity).toBeCloseTo(0.9 / Math.sqrt(0.85), 5);
    server.status = 500;
    try {
      const failed = await postJson(`${strict.url}/v1/embeddings/similarity`, { text: 'unseen words', topic: 'billing' });
      expect(failed.status).toBe(500);
    } finally {
      server.status = 200;
    }
    expect((await postJson(`${strict.url}/v1/embeddings/similarity`, { text: '' })).status).toBe(400);
  });
});

describe('embeddings: not configured, and the similarity rate limit across replicas', () => {
  it('answers 404 without an embedding provider, and refuses semantic_match rules at load', async () => {
    const gw = await startGateway('memory', { rules: { directory: rulesDir({ 'semantic.yaml': RULES }) } });
    try {
      expect((await postJson(`${gw.url}/v1/embeddings/similarity`, { text: 'a', topic: 'b' })).status).toBe(404);
      expect(((await requestJson('GET', `${gw.url}/v1/rules`)).body as { rules: unknown[] }).rules).toHaveLength(0);
    } finally {
      await gw.close();
    }
  });

  it('the sixth request in a minute from one caller is 429, spread over two replicas', async () => {
    const server = await startOpenAiServer();
    const config = { embedding: { enabled: true, endpoint: server.url }, state: { prefix: uniquePrefix() } };
    const a = await startGateway('redis', config);
    const b = await startGateway('redis', config);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await postJson(`${(i % 2 ? a : b).url}/v1/embeddings/similarity`, { text: `t${i}`, topic: 'x' })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    } finally {
      await a.close();
      await b.close();
      await server.close();
    }
  });
});
