import { createConnection, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  port: number;
  /** New connections go to this port from now on; open ones stay where they are. */
  switchTo(port: number): void;
  close(): Promise<void>;
}

/**
 * A TCP forwarder on a free port: a managed Redis's failover address. Moving it (`switchTo`)
 * leaves the connections already open on the old node, as a DNS or VIP move does.
 */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let target = targetPort;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: target });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    switchTo: (port) => {
      target = port;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
