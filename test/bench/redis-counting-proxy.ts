/**
 * Client-side counting of Redis traffic without touching the client library: a TCP proxy in
 * front of redis-server that parses both directions (RESP) and counts, per connection,
 * commands sent and round trips. A round trip starts when the client sends a command while no
 * earlier command on that connection is still unanswered, and lasts until every reply has been
 * delivered: a pipeline (or commands written back to back) is one round trip, each command sent
 * after awaiting a reply is another. Replies can be held back `replyDelayMs`, so that commands
 * a client issues together but writes separately (Promise.all over two pipelines) are not
 * split by a fast local Redis answering the first before the second arrives; the delay also
 * shows up in the client's latency once per sequential round trip. It only sees serial traffic
 * meaningfully (the runner drives it at concurrency 1); it runs in the runner's process and is
 * never on the loaded path.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { RespStream, type RespCommand } from './resp-counter.js';

export interface RedisTraffic {
  commands: number;
  roundTrips: number;
  byCommand: Record<string, number>;
}

export class RedisCountingProxy {
  private readonly totals: RedisTraffic = { commands: 0, roundTrips: 0, byCommand: {} };
  private readonly sockets = new Set<Socket>();
  /** Hold each reply this long before passing it on (0: pass on at once). */
  replyDelayMs = 0;
  /**
   * Commands to leave out of the counts (still relayed): traffic known not to belong to what is
   * measured, such as periodic polls. They neither start a round trip nor hold one open.
   */
  ignore: (command: RespCommand) => boolean = () => false;
  /**
   * Commands counted as commands but not as round trips: work the client does off the request
   * path (the deferred-write applies), whose replies no request waits for.
   */
  offPath: (command: RespCommand) => boolean = () => false;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<RedisCountingProxy> {
    let proxy: RedisCountingProxy | undefined;
    const server = createServer((client) => proxy?.relay(client, target));
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const addr = server.address();
        resolve(typeof addr === 'object' && addr ? addr.port : 0);
      });
    });
    proxy = new RedisCountingProxy(server, port);
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** A copy of the totals so far (diff two snapshots to measure a window). */
  snapshot(): RedisTraffic {
    return { commands: this.totals.commands, roundTrips: this.totals.roundTrips, byCommand: { ...this.totals.byCommand } };
  }

  private relay(client: Socket, target: { host: string; port: number }): void {
    const upstream = createConnection(target);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    this.sockets.add(client).add(upstream);
    const commands = new RespStream(true);
    const replies = new RespStream(false);
    // Replies come back in command order: for each unanswered command, whether it holds a round trip open.
    const awaiting: boolean[] = [];
    let head = 0;
    let countedOutstanding = 0;
    client.on('data', (chunk: Buffer) => {
      for (const command of commands.push(chunk)) {
        const counted = !this.ignore(command);
        const onPath = counted && !this.offPath(command);
        awaiting.push(onPath);
        if (!counted) continue;
        this.totals.commands++;
        this.totals.byCommand[command.name] = (this.totals.byCommand[command.name] ?? 0) + 1;
        if (!onPath) continue;
        if (countedOutstanding === 0) this.totals.roundTrips++;
        countedOutstanding++;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      const answered = replies.push(chunk).length;
      const deliver = () => {
        // Pub/sub pushes arrive without a command: they find nothing awaiting and change nothing.
        for (let i = 0; i < answered && head < awaiting.length; i++) if (awaiting[head++]) countedOutstanding--;
        if (head > 1024 && head === awaiting.length) {
          awaiting.length = 0;
          head = 0;
        }
        if (!client.destroyed) client.write(chunk);
      };
      // Equal delays fire in insertion order, so replies keep their order.
      if (this.replyDelayMs > 0) setTimeout(deliver, this.replyDelayMs);
      else deliver();
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export function trafficDelta(after: RedisTraffic, before: RedisTraffic): RedisTraffic {
  const byCommand: Record<string, number> = {};
  for (const [name, n] of Object.entries(after.byCommand)) {
    const d = n - (before.byCommand[name] ?? 0);
    if (d > 0) byCommand[name] = d;
  }
  return { commands: after.commands - before.commands, roundTrips: after.roundTrips - before.roundTrips, byCommand };
}

/** `a − b`, per command and in total, never below zero (for taking out background traffic). */
export function subtractTraffic(a: RedisTraffic, b: RedisTraffic): RedisTraffic {
  const byCommand: Record<string, number> = {};
  for (const [name, n] of Object.entries(a.byCommand)) {
    const d = n - (b.byCommand[name] ?? 0);
    if (d > 0) byCommand[name] = d;
  }
  return { commands: Math.max(0, a.commands - b.commands), roundTrips: Math.max(0, a.roundTrips - b.roundTrips), byCommand };
}
