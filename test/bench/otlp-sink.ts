import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A collector that accepts every OTLP/HTTP export and keeps nothing: the tracing scenario's endpoint. */
export async function startOtlpSink(): Promise<{ url: string; exports: () => number; close(): Promise<void> }> {
  let exports = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      exports++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
