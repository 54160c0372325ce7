import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** The exporting process's `sluice.role` resource attribute (serve, api, worker). */
  role: string;
  /** How the export that carried it was encoded (OTLP/HTTP takes both). */
  encoding: 'protobuf' | 'json';
  attributes?: KeyValue[];
}

interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { spans?: Omit<ReceivedSpan, 'role' | 'encoding'>[] }[];
  }[];
}

/**
 * The part of OTLP's trace protobuf schema (opentelemetry-proto, trace/v1 and common/v1) the
 * tests read; field numbers are the schema's.
 */
const OTLP_PROTO = protobuf.Root.fromJSON({
  nested: {
    ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
    ResourceSpans: { fields: { resource: { type: 'Resource', id: 1 }, scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 } } },
    Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
    ScopeSpans: { fields: { spans: { rule: 'repeated', type: 'Span', id: 2 } } },
    Span: {
      fields: {
        traceId: { type: 'bytes', id: 1 },
        spanId: { type: 'bytes', id: 2 },
        parentSpanId: { type: 'bytes', id: 4 },
        name: { type: 'string', id: 5 },
        attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
      },
    },
    KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
    AnyValue: {
      fields: {
        stringValue: { type: 'string', id: 1 },
        boolValue: { type: 'bool', id: 2 },
        intValue: { type: 'int64', id: 3 },
        doubleValue: { type: 'double', id: 4 },
      },
    },
  },
}).lookupType('ExportTraceServiceRequest');

function decodeProtobuf(body: Buffer): OtlpExport {
  const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
  const message = OTLP_PROTO.decode(body);
  // Ids are bytes on the wire, hex in OTLP/JSON: convert so both encodings compare alike.
  const plain = OTLP_PROTO.toObject(message, { longs: String, bytes: Array, defaults: false }) as OtlpExport;
  for (const rs of plain.resourceSpans ?? [])
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? []) {
        const raw = s as unknown as { traceId: number[]; spanId: number[]; parentSpanId?: number[] };
        s.traceId = hex(Uint8Array.from(raw.traceId));
        s.spanId = hex(Uint8Array.from(raw.spanId));
        if (raw.parentSpanId?.length) s.parentSpanId = hex(Uint8Array.from(raw.parentSpanId));
        else delete s.parentSpanId;
      }
  return plain;
}

export interface OtlpReceiver {
  url: string;
  /** Every span received (empty when started with `collect: false`). */
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

/**
 * An OTLP/HTTP trace receiver (protobuf and JSON) on a local port: what a collector would get.
 * The bench's tracing scenario starts it with `collect: false`, so it answers every export
 * without the cost of decoding it.
 */
export async function startOtlpReceiver(opts: { collect?: boolean } = {}): Promise<OtlpReceiver> {
  const collect = opts.collect ?? true;
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    if (collect) req.on('data', (c: Buffer) => chunks.push(c));
    else req.resume();
    req.on('end', () => {
      if (collect && req.url === '/v1/traces') {
        const body = Buffer.concat(chunks);
        const encoding = req.headers['content-type'] === 'application/x-protobuf' ? 'protobuf' : 'json';
        const exported = encoding === 'protobuf' ? decodeProtobuf(body) : (JSON.parse(body.toString()) as OtlpExport);
        for (const rs of exported.resourceSpans ?? []) {
          const role = rs.resource?.attributes?.find((a) => a.key === 'sluice.role')?.value.stringValue ?? '';
          for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) spans.push({ ...s, role, encoding });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
