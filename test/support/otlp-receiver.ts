import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

type AnyValue = { stringValue?: string };

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** The exporting process's `sluice.role` resource attribute (serve, api, worker). */
  role: string;
  attributes?: { key: string; value: AnyValue }[];
}

interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans?: { spans?: Omit<ReceivedSpan, 'role'>[] }[];
  }[];
}

export interface OtlpReceiver {
  url: string;
  /** Every span received (empty when started with `collect: false`). */
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

/**
 * An OTLP/HTTP (JSON) trace receiver on a local port: what a collector would get. The bench's
 * tracing scenario starts it with `collect: false`, so it answers every export without the cost
 * of parsing it.
 */
export async function startOtlpReceiver(opts: { collect?: boolean } = {}): Promise<OtlpReceiver> {
  const collect = opts.collect ?? true;
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    let body = '';
    if (collect) req.on('data', (c: Buffer) => (body += c.toString()));
    else req.resume();
    req.on('end', () => {
      if (collect && req.url === '/v1/traces') {
        const exported = JSON.parse(body) as OtlpExport;
        for (const rs of exported.resourceSpans ?? []) {
          const role = rs.resource?.attributes?.find((a) => a.key === 'sluice.role')?.value.stringValue ?? '';
          for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) spans.push({ ...s, role });
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
