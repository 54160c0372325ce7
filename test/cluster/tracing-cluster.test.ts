import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';
import { poll } from '../support/poll.js';
import { rulesDir } from '../support/rules-dir.js';
import { sampleAction } from '../support/start-gateway.js';
import { Cluster } from './harness.js';

const TRACE = '5ce0e9a56015fec5aadfa328ae398115';
const SECRET = '4111-PLANTED-IN-A-PAYLOAD';
const PARENT = 'ab30d7e3b0a1d2f4';
const RULES =
  'rules:\n  - { name: two-steps, priority: 1, condition: { field: action.action_type, eq: onboard }, action: { type: chain, chain_name: onboard } }\n';

/**
 * A chain started by a traced request runs its steps on a `sluice worker` process; every span —
 * the API's request and dispatch, the worker's step jobs and their dispatches — reaches the
 * collector under the caller's trace. The API exports OTLP/HTTP as protobuf (the default), the
 * worker as JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json): the receiver decodes each.
 */
describe('cluster: a trace through the API and the worker (OTLP)', () => {
  let cluster: Cluster;
  let sink: HttpSink;
  let otlp: OtlpReceiver;
  beforeAll(async () => {
    sink = await startSink();
    otlp = await startOtlpReceiver();
    cluster = await Cluster.start({
      apis: 1,
      workers: 1,
      config: {
        rules: { directory: rulesDir({ 'chains.yaml': RULES }) },
        providers: [{ name: 'hook', type: 'webhook', url: sink.url }],
        chains: {
          definitions: [
            {
              name: 'onboard',
              steps: [
                { name: 'welcome', provider: 'hook', action_type: 'welcome' },
                { name: 'follow-up', provider: 'hook', action_type: 'follow-up' },
              ],
            },
          ],
        },
        telemetry: { tracing: { enabled: true, exporter: 'otlp-http', endpoint: otlp.url } },
      },
      workerEnv: { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
    });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    await sink?.close();
    await otlp?.close();
  });

  it("the chain's steps, run by the worker, are spans of the dispatch that started it; the provider calls carry the trace", async () => {
    const res = await fetch(`${cluster.nextApi().url}/v1/dispatch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${TRACE}-${PARENT}-01` },
      body: JSON.stringify(sampleAction({ tenant: 'traced', provider: 'hook', action_type: 'onboard', payload: { card: SECRET } })),
    });
    expect(await res.json()).toMatchObject({ outcome: 'chain_started' });
    await poll(
      'both steps to reach the provider',
      () => sink.received.length,
      (n) => n === 2,
      { timeoutMs: 20_000 },
    );
    // Spans are exported in batches (every 5 s by default).
    const spans = await poll(
      "the worker's step spans at the collector",
      () => otlp.spans.filter((s) => s.traceId === TRACE),
      (list) =>
        list.filter((s) => s.role === 'worker' && s.name === 'job chain-step').length >= 2 && list.some((s) => s.role === 'api' && s.name === 'request'),
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    const request = spans.find((s) => s.role === 'api' && s.name === 'request');
    expect(request?.parentSpanId).toBe(PARENT);
    expect(new Set(spans.filter((s) => s.role === 'api').map((s) => s.encoding))).toEqual(new Set(['protobuf']));
    expect(new Set(spans.filter((s) => s.role === 'worker').map((s) => s.encoding))).toEqual(new Set(['json']));
    // The worker ran dispatches (the steps) under its job spans, with Redis commands and provider calls under them.
    const workerDispatches = spans.filter((s) => s.role === 'worker' && s.name === 'dispatch');
    expect(workerDispatches.length).toBeGreaterThanOrEqual(2);
    expect(spans.some((s) => s.role === 'worker' && s.name === 'POST')).toBe(true);
    expect(spans.some((s) => s.role === 'api' && /^(evalsha|get|set|zadd|multi|exec)$/i.test(s.name))).toBe(true);
    for (const call of sink.received) expect(call.headers.traceparent).toMatch(new RegExp(`^00-${TRACE}-`));
    // Spans carry no payload: Redis spans name their command, not its arguments (records, payloads).
    const leaks = otlp.spans.filter((s) => JSON.stringify(s.attributes ?? []).includes(SECRET));
    expect(leaks.map((s) => s.name)).toEqual([]);
  }, 60_000);
});
