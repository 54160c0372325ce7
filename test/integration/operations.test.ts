import { spawnSync } from 'node:child_process';
import { FAILURE_CODE_LIST } from '@sluice/core';
import { OPERATION_IDS } from '../../apps/api/src/plugins/operation-ids.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { prometheusSample } from '../support/prometheus-text.js';
import { uniquePrefix } from '../support/redis-url.js';
import { startRedisServer } from '../support/redis-server.js';
import { spawnSluice } from '../support/sluice-process.js';
import { BACKENDS, postJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

describe.each(BACKENDS)('operations endpoints (%s backend)', (backend) => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(backend);
  });
  afterAll(() => gw.close());

  it('GET /health reports ok with the spec counters, which move with dispatches', async () => {
    const before = (await (await fetch(`${gw.url}/health`)).json()) as { status: string; metrics: Record<string, number> };
    expect(before.status).toBe('ok');
    expect(Object.keys(before.metrics).sort()).toEqual(
      ['deduplicated', 'dispatched', 'executed', 'failed', 'grouped', 'pending_approval', 'rerouted', 'suppressed', 'throttled'].sort(),
    );
    await postJson(`${gw.url}/v1/dispatch`, sampleAction());
    const after = (await (await fetch(`${gw.url}/health`)).json()) as { metrics: Record<string, number> };
    expect(after.metrics.dispatched).toBe((before.metrics.dispatched ?? 0) + 1);
    expect(after.metrics.executed).toBe((before.metrics.executed ?? 0) + 1);
    // A dry run dispatches nothing, alone or in a batch (its outcome has its own Prometheus series).
    expect((await postJson(`${gw.url}/v1/dispatch?dry_run=true`, sampleAction())).body?.outcome).toBe('dry_run');
    expect((await postJson(`${gw.url}/v1/dispatch/batch?dry_run=true`, { actions: [sampleAction(), sampleAction()] })).status).toBe(200);
    const afterDryRuns = (await (await fetch(`${gw.url}/health`)).json()) as { metrics: Record<string, number> };
    expect(afterDryRuns.metrics).toEqual(after.metrics);
  });

  it('GET /metrics is Prometheus text by default and JSON counters on request', async () => {
    await postJson(`${gw.url}/v1/dispatch`, sampleAction());
    const text = await fetch(`${gw.url}/metrics`);
    expect(text.headers.get('content-type')).toMatch(/^text\/plain/);
    const body = await text.text();
    expect(body).toMatch(/sluice_actions_total\{outcome="executed"\} \d+/);
    expect(body).toMatch(/sluice_provider_requests_total\{provider="noop",result="success"\} \d+/);
    expect(body).toMatch(/sluice_provider_request_duration_seconds_bucket/);
    // The audit ingest's backlog and its failures, for alerting.
    expect(body).toMatch(/^sluice_audit_ingest_backlog \d+$/m);
    expect(body).toMatch(/^sluice_audit_index_writes_failed_total 0$/m);
    // Queue depths of the job kinds this process consumes (the dashboard's scaling signal).
    expect(body).toMatch(/^sluice_queue_jobs\{queue="[a-z-]+",state="waiting"\} \d+$/m);
    expect(body).toMatch(/^sluice_queue_jobs\{queue="[a-z-]+",state="delayed"\} \d+$/m);
    const json = await fetch(`${gw.url}/metrics`, { headers: { accept: 'application/json' } });
    expect(await json.json()).toMatchObject({ dispatched: expect.any(Number), executed: expect.any(Number) });
    expect((await fetch(`${gw.url}/metrics/prometheus`)).headers.get('content-type')).toMatch(/^text\/plain/);
  });

  it('GET /ready is 200, and 503 while draining', async () => {
    expect((await fetch(`${gw.url}/ready`)).status).toBe(200);
    gw.readiness.startDraining();
    const res = await fetch(`${gw.url}/ready`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ code: 'NOT_READY' });
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
  });

  it('serves the OpenAPI 3.1 document and the Swagger UI', async () => {
    const doc = (await (await fetch(`${gw.url}/api-doc/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/dispatch', '/v1/dispatch/batch', '/health', '/ready', '/metrics']));
    // A failed outcome's error.code is an enum of the registry's failure codes.
    expect(JSON.stringify(doc)).toContain(JSON.stringify(FAILURE_CODE_LIST));
    const ui = await fetch(`${gw.url}/swagger-ui/`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toMatch(/swagger/i);
  });

  it('documents every status an operation can answer: its success, and the errors of auth, limits, the backend and bodies', async () => {
    type Operation = { responses: Record<string, unknown>; security?: unknown[] };
    const doc = (await (await fetch(`${gw.url}/api-doc/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
    const codes = (op: Operation) => Object.keys(op.responses);
    // A DELETE answering 204 said nothing of it, so the generated client typed no success at all.
    expect(operations.filter(({ op }) => !codes(op).some((c) => /^[23]/.test(c))).map(({ method, path }) => `${method} ${path}`)).toEqual([]);
    expect(codes(doc.paths['/v1/quotas/{id}']?.['delete'] as Operation)).toContain('204');
    const isPublic = (op: Operation) => Array.isArray(op.security) && op.security.length === 0;
    for (const { path, method, op } of operations.filter(({ op }) => !isPublic(op))) {
      expect({ path, method, codes: codes(op) }).toMatchObject({ codes: expect.arrayContaining(['401', '403', '429', '503']) });
      if (method === 'post' || method === 'put')
        expect({ path, method, codes: codes(op) }).toMatchObject({ codes: expect.arrayContaining(['400', '413', '415']) });
    }
    expect(codes(doc.paths['/health']?.['get'] as Operation)).toEqual(['200']);
    // Alertmanager's routes answer errors as a bare JSON string, the added ones included.
    const alerts = doc.paths['/api/v2/alerts']?.['post'] as Operation;
    for (const status of ['400', '408', '413', '415', '503']) {
      expect(JSON.stringify(alerts.responses[status]), status).toMatch(/"type":"string"/);
    }
  });

  it('names every operation once, from the operationId table, and the table names no route that does not exist', async () => {
    type Operation = { operationId?: string };
    const doc = (await (await fetch(`${gw.url}/api-doc/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    const named = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op.operationId]),
    );
    expect(named.filter(([, id]) => id === undefined)).toEqual([]);
    expect(Object.fromEntries(named)).toEqual(OPERATION_IDS);
    expect(new Set(Object.values(OPERATION_IDS)).size).toBe(Object.keys(OPERATION_IDS).length);
  });

  it('echoes a request id', async () => {
    const res = await fetch(`${gw.url}/health`, { headers: { 'x-request-id': 'req-123' } });
    expect(res.headers.get('x-request-id')).toBe('req-123');
  });
});

describe('sluice_audit_ingest_backlog on Redis', () => {
  it('is read at each scrape: a replica shows records another stored, and the backlog gone once another indexed it', async () => {
    const prefix = uniquePrefix();
    // Two API replicas without workers: nothing indexes but a query's catch-up.
    const a = await startGateway('redis', { state: { prefix } }, { worker: false });
    const b = await startGateway('redis', { state: { prefix } }, { worker: false });
    const backlog = async (gw: RunningGateway) => prometheusSample(await (await fetch(`${gw.url}/metrics`)).text(), 'sluice_audit_ingest_backlog');
    try {
      for (let i = 0; i < 30; i++) expect((await postJson(`${b.url}/v1/dispatch`, sampleAction({ tenant: 'backlog' }))).status).toBe(200);
      expect(await backlog(a)).toBe(30);
      // A list query on b indexes what waits; a, which indexed nothing, says so too.
      expect((await fetch(`${b.url}/v1/audit?tenant=backlog&limit=1`)).status).toBe(200);
      expect(await backlog(a)).toBe(0);
      expect(await backlog(b)).toBe(0);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('readiness with Redis down', () => {
  it('turns /ready to 503 while /health stays 200', async () => {
    const redis = await startRedisServer();
    const gw = await startGateway('redis', { state: { url: redis.url } });
    try {
      expect((await fetch(`${gw.url}/ready`)).status).toBe(200);
      await redis.stop();
      const res = await fetch(`${gw.url}/ready`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ error: 'not ready: state backend unreachable', code: 'NOT_READY' });
      expect((await fetch(`${gw.url}/health`)).status).toBe(200);
    } finally {
      await gw.app.close();
      await Promise.race([gw.runtime.close(), new Promise((r) => setTimeout(r, 2000))]);
    }
  });
});

describe('GET /metrics of a real process (the default Node.js metrics included)', () => {
  it('passes Prometheus’s own lint (promtool check metrics)', async () => {
    const port = await freePort();
    const proc = await spawnSluice(['serve', '--port', String(port), '--host', '127.0.0.1'], { port });
    try {
      await postJson(`${proc.url}/v1/dispatch`, sampleAction());
      const body = await (await fetch(`${proc.url}/metrics`)).text();
      expect(body).toMatch(/^sluice_nodejs_active_handles\{/m);
      const lint = spawnSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8' });
      expect(lint.error, 'promtool is not installed (.ci/run installs the prometheus package)').toBeUndefined();
      expect(`${lint.stdout}${lint.stderr}`).toBe('');
      expect(lint.status).toBe(0);
    } finally {
      proc.kill('SIGKILL');
    }
  });
});
