import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { ManualClock } from '@sluice/core';
import { startTracing, type Tracing } from '@sluice/telemetry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { poll } from '../support/poll.js';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

/** One tracer provider per process: the global one. This file's gateways share it. */
const exporter = new InMemorySpanExporter();
let tracing: Tracing;

beforeAll(async () => {
  const started = await startTracing({ enabled: true, exporter: 'none', headers: {} }, { role: 'test', exporter });
  if (started === null) throw new Error('tracing did not start');
  tracing = started;
});
afterAll(() => tracing.shutdown());

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';
const traceparent = `00-${TRACE}-${PARENT}-01`;

function spansOf(traceId: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
}
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const named = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const childrenOf = (spans: ReadableSpan[], parent: ReadableSpan) => spans.filter((s) => parentOf(s) === parent.spanContext().spanId);
/** A POST /v1/dispatch's request span, which is its dispatch's span too (the dispatch's attributes, the stage spans under it). */
const requestSpanOf = (tenant: string) => exporter.getFinishedSpans().find((s) => s.name === 'request' && s.attributes['sluice.tenant'] === tenant);

describe.each(BACKENDS)('tracing (%s)', (backend) => {
  let gw: RunningGateway;
  let sink: HttpSink;
  beforeAll(async () => {
    sink = await startSink();
    gw = await startGateway(
      backend,
      {
        providers: [
          // A query that is the webhook's credential: no span may carry it.
          { name: 'hook', type: 'webhook', url: `${sink.url}?token=hook-secret` },
          { name: 'email', type: 'noop' },
        ],
        rules: { directory: null },
        server: { external_url: 'http://sluice.example' },
      },
      { tracing },
    );
    await postJson(`${gw.url}/v1/rules`, {
      name: `traced-${backend}`,
      condition: { field: 'action.action_type', eq: 'never-matches' },
      action: { type: 'suppress' },
    });
    await postJson(`${gw.url}/v1/rules`, {
      name: `approve-${backend}`,
      condition: { field: 'action.action_type', eq: 'wire' },
      action: { type: 'require_approval', ttl_seconds: 600 },
    });
  });
  afterAll(async () => {
    await gw.close();
    await sink.close();
  });

  it("continues the caller's trace: request span under its parent, the dispatch's attributes on it and its stage spans under it, the webhook gets the same trace", async () => {
    const tenant = `trace-${backend}`;
    const res = await postJson(`${gw.url}/v1/dispatch?dry_run=false`, sampleAction({ tenant, provider: 'hook' }), {
      traceparent,
      tracestate: 'vendor=opaque',
      baggage: 'user.email=someone@example.com',
    });
    expect(res.body).toMatchObject({ outcome: 'executed' });
    const spans = await poll(
      'the spans',
      () => spansOf(TRACE),
      (found) => requestSpanOf(tenant) !== undefined && named(found, 'stage execute').length > 0,
    );
    // Both backends' tests continue the same trace: this one's request span is the one of its tenant.
    const request = requestSpanOf(tenant) as ReadableSpan;
    expect(parentOf(request)).toBe(PARENT);
    // The path without its query, which can carry a signature: an approval link's, in the same trace, is in no span.
    expect(request.attributes['url.path']).toBe('/v1/dispatch');
    const link = `/v1/approvals/payments/${tenant}/no-such-approval/approve`;
    const decided = await requestJson('POST', `${gw.url}${link}?sig=query-secret&expires_at=4102444800`, undefined, { traceparent });
    expect(decided.status).toBe(404);
    const withLink = await poll(
      'the approval link span',
      () => spansOf(TRACE),
      (found) => found.some((s) => s.name === 'request' && s.attributes['url.path'] === link),
    );
    expect(JSON.stringify(withLink.map((s) => s.attributes))).not.toContain('query-secret');
    expect(JSON.stringify(exporter.getFinishedSpans().map((s) => s.attributes))).not.toContain('hook-secret');
    // The request is this one dispatch: its span is the dispatch's, no child span repeats it.
    expect(request.attributes).toMatchObject({ 'sluice.tenant': tenant, 'sluice.outcome': 'executed', 'sluice.provider': 'hook' });
    expect(named(spans, 'dispatch')).toEqual([]);
    const stages = childrenOf(spans, request).map((s) => s.name);
    expect(stages).toEqual(expect.arrayContaining(['stage rules', 'stage execute']));
    // No rule matched: nothing to apply, no rule_action span; no quota policy applies: nothing to count, no quota span.
    expect(stages).not.toContain('stage rule_action');
    expect(stages).not.toContain('stage quota');
    const execute = childrenOf(spans, request).find((s) => s.name === 'stage execute') as ReadableSpan;
    expect(execute.attributes).toMatchObject({ 'sluice.provider': 'hook', 'sluice.attempts': 1 });
    // The provider call carries the trace on, and tracestate unchanged.
    const call = sink.received.find((c) => c.headers.traceparent?.includes(TRACE));
    expect(call?.headers.traceparent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    expect(call?.headers.tracestate).toBe('vendor=opaque');
    // Baggage is not propagated: it would carry whatever the caller put in it to every provider.
    expect(call?.headers.baggage).toBeUndefined();
    // The audit record keeps the trace id, and the trail can be searched by it.
    const found = await requestJson('GET', `${gw.url}/v1/audit?trace_id=${TRACE}&tenant=${tenant}`);
    expect((found.body as { records: { trace_id: string }[] }).records).toEqual([expect.objectContaining({ trace_id: TRACE })]);
  });

  it("a batch of 3 is one batch span (the request's) with a dispatch span per action", async () => {
    const trace = `${backend === 'memory' ? '1' : '2'}${'a'.repeat(31)}`;
    const actions = [1, 2, 3].map((n) => sampleAction({ tenant: `batch-${backend}`, payload: { n } }));
    const res = await postJson(`${gw.url}/v1/dispatch/batch`, { actions }, { traceparent: `00-${trace}-${PARENT}-01` });
    expect(res.status).toBe(200);
    const spans = await poll(
      'the batch spans',
      () => spansOf(trace),
      (s) => named(s, 'dispatch').length === 3 && named(s, 'request').length === 1,
    );
    const [batch] = named(spans, 'request');
    expect(batch?.attributes['sluice.batch_size']).toBe(3);
    expect(named(spans, 'dispatch_batch')).toEqual([]);
    expect(named(spans, 'dispatch').map(parentOf)).toEqual(Array(3).fill(batch?.spanContext().spanId));
  });

  it('gives the quota stage a span once a quota policy applies to the tenant', async () => {
    const tenant = `quota-${backend}`;
    const trace = `${backend === 'memory' ? '5' : '6'}${'e'.repeat(31)}`;
    const created = await postJson(`${gw.url}/v1/quotas`, { id: `traced-${backend}`, namespace: 'payments', tenant, max_actions: 100, window: 'daily' });
    expect(created.status).toBe(201);
    const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant }), { traceparent: `00-${trace}-${PARENT}-01` });
    expect(res.body).toMatchObject({ outcome: 'executed' });
    const spans = await poll(
      'the request span',
      () => spansOf(trace),
      (found) => named(found, 'request').length > 0 && named(found, 'stage execute').length > 0,
    );
    const stages = childrenOf(spans, named(spans, 'request')[0] as ReadableSpan).map((s) => s.name);
    expect(stages).toEqual(expect.arrayContaining(['stage quota', 'stage rules', 'stage execute']));
  });

  it("an approved action's execution links to the dispatch that asked for approval", async () => {
    const trace = `${backend === 'memory' ? '3' : '4'}${'c'.repeat(31)}`;
    const pending = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant: `approve-${backend}`, provider: 'hook', action_type: 'wire' }), {
      traceparent: `00-${trace}-${PARENT}-01`,
    });
    expect(pending.body).toMatchObject({ outcome: 'pending_approval' });
    // The matched rule is applied in a span of its own.
    const applied = await poll(
      'the rule_action span',
      () => spansOf(trace).find((s) => s.name === 'stage rule_action'),
      (s) => s !== undefined,
    );
    expect(applied?.attributes['sluice.outcome']).toBe('pending_approval');
    // The approver's click carries no trace context: the execution runs in the link request's trace.
    const link = (pending.body as { approve_url: string }).approve_url.replace('http://sluice.example', gw.url);
    expect((await postJson(link, undefined)).body).toMatchObject({ outcome: { outcome: 'executed' } });
    const execution = await poll(
      'the approval execution span',
      () => exporter.getFinishedSpans().find((s) => s.name === 'approval execute' && s.links.some((l) => l.context.traceId === trace)),
      (s) => s !== undefined,
    );
    expect(execution?.spanContext().traceId).not.toBe(trace);
    expect(execution?.attributes['sluice.approval_id']).toBe((pending.body as { approval_id: string }).approval_id);
  });

  it('an invalid traceparent starts a new trace, without an error', async () => {
    const tenant = `fresh-${backend}`;
    const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant }), { traceparent: '00-zz-not-valid-01' });
    expect(res.body).toMatchObject({ outcome: 'executed' });
    const request = await poll(
      'the request span',
      () => requestSpanOf(tenant),
      (s) => s !== undefined,
    );
    const traceId = request?.spanContext().traceId as string;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(request && parentOf(request)).toBeUndefined();
    const record = await requestJson('GET', `${gw.url}/v1/audit?tenant=${tenant}`);
    expect((record.body as { records: { trace_id: string }[] }).records[0]?.trace_id).toBe(traceId);
    // A trace id that is not one is refused, not matched against nothing.
    const bad = await requestJson('GET', `${gw.url}/v1/audit?trace_id=${traceId.toUpperCase()}`);
    expect(bad).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
  });

  it("a caller's unsampled trace records no span, and still reaches the provider and the trail", async () => {
    const tenant = `unsampled-${backend}`;
    const unsampledTrace = backend === 'memory' ? '5bf10d6c4e3b4c1f9a8e7d6c5b4a3928' : '5bf10d6c4e3b4c1f9a8e7d6c5b4a3929';
    const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant, provider: 'hook' }), {
      traceparent: `00-${unsampledTrace}-${PARENT}-00`,
      tracestate: 'vendor=kept',
    });
    expect(res.body).toMatchObject({ outcome: 'executed' });
    // The webhook gets the caller's trace, unsampled, and its tracestate.
    const call = await poll(
      'the webhook call',
      () => sink.received.find((c) => c.headers.traceparent?.includes(unsampledTrace)),
      (c) => c !== undefined,
    );
    expect(call?.headers.traceparent).toMatch(new RegExp(`^00-${unsampledTrace}-[0-9a-f]{16}-00$`));
    expect(call?.headers.tracestate).toBe('vendor=kept');
    const found = await requestJson('GET', `${gw.url}/v1/audit?trace_id=${unsampledTrace}&tenant=${tenant}`);
    expect((found.body as { records: { trace_id: string }[] }).records).toEqual([expect.objectContaining({ trace_id: unsampledTrace })]);
    // A sampled dispatch after it is exported: had this one made spans, they would be there by now.
    const after = `sampled-after-${backend}`;
    await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant: after }), { traceparent });
    await poll(
      'the later request span',
      () => requestSpanOf(after),
      (s) => s !== undefined,
    );
    expect(spansOf(unsampledTrace)).toEqual([]);
  });
});

describe('tracing a recurring action (memory, manual clock)', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 9, 0, 30));
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway('memory', { providers: [{ name: 'email', type: 'noop' }] }, { clock, tracing });
  });
  afterAll(() => gw.close());

  it('each occurrence is a trace of its own, linked to the request that created the recurring action', async () => {
    const trace = '5'.repeat(32);
    const created = await postJson(
      `${gw.url}/v1/recurring?namespace=payments&tenant=recurring-traced`,
      { cron_expr: '* * * * *', timezone: 'UTC', provider: 'email', action_type: 'tick', payload: {} },
      { traceparent: `00-${trace}-${PARENT}-01` },
    );
    expect(created.status).toBe(201);
    await clock.advanceAsync(60_000);
    const occurrence = await poll(
      'the occurrence job span',
      () => exporter.getFinishedSpans().find((s) => s.name === 'job recurring-fire' && s.links.some((l) => l.context.traceId === trace)),
      (s) => s !== undefined,
    );
    expect(occurrence?.spanContext().traceId).not.toBe(trace);
    expect(occurrence && parentOf(occurrence)).toBeUndefined();
    // The occurrence's dispatch is in the occurrence's trace.
    const dispatch = exporter.getFinishedSpans().find((s) => s.name === 'dispatch' && s.spanContext().traceId === occurrence?.spanContext().traceId);
    expect(dispatch?.attributes['sluice.action_type']).toBe('tick');
  });
});
