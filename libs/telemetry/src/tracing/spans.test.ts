import { context, propagation, trace, TraceFlags } from '@opentelemetry/api';
import {
  AlwaysOnSampler,
  InMemorySpanExporter,
  NodeTracerProvider,
  ParentBasedSampler,
  SimpleSpanProcessor,
  type Sampler,
} from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inSpan, inSpanSync } from './spans.js';

const exporter = new InMemorySpanExporter();
let asked = 0;
/** Parent-based, as the gateway's; counts the spans it is asked about. */
const inner = new ParentBasedSampler({ root: new AlwaysOnSampler() });
const counting: Sampler = {
  shouldSample: (...args) => {
    asked++;
    return inner.shouldSample(...args);
  },
};
const provider = new NodeTracerProvider({ sampler: counting, spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('test');

beforeAll(() => provider.register());
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});

/** Runs `work` under a remote parent whose trace is (not) sampled, as an incoming traceparent puts it. */
function underParent<T>(sampled: boolean, work: () => T): T {
  const parent = trace.wrapSpanContext({
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
  });
  return context.with(trace.setSpan(context.active(), parent), work);
}

describe('spans under an unsampled parent', () => {
  it('are not started: the sampler is not asked, the parent stands in and carries the trace', async () => {
    asked = 0;
    const seen = await underParent(false, () =>
      inSpan(tracer, 'dispatch', undefined, async (span) => {
        const stage = inSpanSync(
          tracer,
          'stage rules',
          () => trace.getActiveSpan()?.spanContext().traceId,
          () => {},
        );
        return { traceId: span.spanContext().traceId, stage };
      }),
    );
    expect(seen).toEqual({ traceId: '0af7651916cd43dd8448eb211c80319c', stage: '0af7651916cd43dd8448eb211c80319c' });
    expect(asked).toBe(0);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('are started and recorded under a sampled one', async () => {
    asked = 0;
    exporter.reset();
    await underParent(true, () =>
      inSpan(tracer, 'dispatch', undefined, async () =>
        inSpanSync(
          tracer,
          'stage rules',
          () => 1,
          () => {},
        ),
      ),
    );
    expect(asked).toBe(2);
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['stage rules', 'dispatch']);
  });
});
