import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Action } from '@sluice/core';

// Test support only (real HTTP servers on ephemeral ports); not exported from the package index.

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The client's port: equal across requests when a keep-alive socket was reused. */
  remotePort: number | undefined;
}

export interface TestServer {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1:0 that records each request (body fully read) before calling `handle`. */
export async function startServer(handle: (req: Received, res: ServerResponse, n: number) => void): Promise<TestServer> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks), remotePort: req.socket.remotePort };
      received.push(r);
      handle(r, res, received.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo; // listening on TCP, so this is AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A URL nobody listens on: bind an ephemeral port, then release it. */
export async function closedPortUrl(): Promise<string> {
  const s = await startServer(() => {});
  await s.close();
  return s.url;
}

export function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', ...headers });
  res.end(text);
}

export function makeAction(over: Partial<Action> = {}): Action {
  return {
    id: 'a-1',
    namespace: 'ns',
    tenant: 't1',
    provider: 'hook',
    action_type: 'notify',
    payload: { msg: 'héllo', n: 1 },
    metadata: { labels: { env: 'test' } },
    created_at: '2025-01-01T00:00:00.000Z',
    ...over,
  };
}

export const ctx = (signal: AbortSignal = new AbortController().signal) => ({ signal, attempt: 1 });
