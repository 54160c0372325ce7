import { capturedLogLines } from '../../../../test/support/log-lines.js';
import { diag } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { inSpan, traceIdOf } from './spans.js';
import { startTracing, type Tracing } from './start.js';
import { otlpHttpEncoding, sampleRatio } from './tracing-settings.js';

const OFF = { enabled: false, exporter: 'none', headers: {} } as const;

describe('tracing off', () => {
  it('starts nothing', async () => {
    expect(await startTracing(OFF, { role: 'test' })).toBeNull();
  });
});

describe('tracing on', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  beforeAll(async () => {
    tracing = (await startTracing({ ...OFF, enabled: true }, { role: 'test', exporter })) as Tracing;
  });
  afterAll(() => tracing.shutdown());

  it('stamps the log lines written inside a span with its trace_id and span_id, and only those', async () => {
    const { destination, lines } = capturedLogLines();
    const logger = createLogger({ level: 'info', role: 'test', destination, traceIds: true });
    logger.info('outside');
    const ids = await inSpan(tracing.tracer, 'work', undefined, async (span) => {
      logger.info('inside');
      return span.spanContext();
    });
    expect(lines[0]).not.toHaveProperty('trace_id');
    expect(lines[1]).toMatchObject({ msg: 'inside', trace_id: ids.traceId, span_id: ids.spanId });
  });

  it("reports the SDK's warnings to the process log", () => {
    const seen: string[] = [];
    tracing.reportTo((detail) => seen.push(detail.otel));
    diag.warn('exporter failed', 'ECONNREFUSED');
    expect(seen).toEqual(['exporter failed ECONNREFUSED']);
  });
});

describe('settings', () => {
  it('reads a traceparent trace id, refusing the invalid and the all-zero ones', () => {
    expect(traceIdOf('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01')).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(traceIdOf(`00-${'0'.repeat(32)}-b7ad6b7169203331-01`)).toBeNull();
    expect(traceIdOf('garbage')).toBeNull();
    // As the propagator judges them with tracing on: version ff, an all-zero parent id.
    expect(traceIdOf('ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01')).toBeNull();
    expect(traceIdOf(`00-0af7651916cd43dd8448eb211c80319c-${'0'.repeat(16)}-01`)).toBeNull();
  });

  it('takes the sample ratio from config, then OTEL_TRACES_SAMPLER_ARG, else 1 (a blank variable is unset)', () => {
    expect(sampleRatio({ ...OFF, sample_ratio: 0.2 }, { OTEL_TRACES_SAMPLER_ARG: '0.5' })).toBe(0.2);
    expect(sampleRatio(OFF, { OTEL_TRACES_SAMPLER_ARG: '0.5' })).toBe(0.5);
    expect(sampleRatio(OFF, { OTEL_TRACES_SAMPLER_ARG: '' })).toBe(1);
    expect(sampleRatio(OFF, { OTEL_TRACES_SAMPLER_ARG: '7' })).toBe(1);
  });

  it('encodes OTLP/HTTP as protobuf unless the traces (else the general) protocol variable says http/json', () => {
    expect(otlpHttpEncoding({})).toBe('protobuf');
    expect(otlpHttpEncoding({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe('json');
    expect(otlpHttpEncoding({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })).toBe('protobuf');
  });
});
