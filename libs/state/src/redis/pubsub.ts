import type { Redis } from 'ioredis';
import { channelName } from '../keys.js';
import type { Unsubscribe } from '../state-store.js';

type Handler = (message: string) => void;

/**
 * Pub/sub over a dedicated subscriber connection, created on the first subscribe (a connection
 * in subscriber mode cannot run other commands). One Redis SUBSCRIBE per channel, fanned out
 * to every local handler.
 */
export class RedisPubSub {
  private subscriber: Redis | null = null;
  /** Per Redis channel: local handlers, and the SUBSCRIBE every one of them waits for. */
  private readonly channels = new Map<string, { subs: Set<{ handler: Handler }>; subscribed: Promise<unknown> }>();
  private closed = false;

  constructor(
    private readonly client: Redis,
    private readonly prefix: string,
    private readonly onHandlerError: (channel: string, err: unknown) => void,
  ) {}

  async publish(channel: string, message: string): Promise<void> {
    await this.client.publish(channelName(this.prefix, channel), message);
  }

  /** Resolves once Redis has confirmed the subscription, so later publishes are delivered. */
  async subscribe(channel: string, handler: Handler): Promise<Unsubscribe> {
    if (this.closed) throw new Error('state store is closed');
    const full = channelName(this.prefix, channel);
    const sub = { handler };
    let entry = this.channels.get(full);
    // Commands are issued synchronously, in call order, so SUBSCRIBE/UNSUBSCRIBE cannot reorder.
    if (entry === undefined) {
      entry = { subs: new Set(), subscribed: this.connection().subscribe(full) };
      this.channels.set(full, entry);
    }
    entry.subs.add(sub);
    const unsubscribe = async (): Promise<void> => {
      const current = this.channels.get(full);
      if (current === undefined || !current.subs.delete(sub) || current.subs.size > 0) return;
      this.channels.delete(full);
      if (this.subscriber !== null) await this.subscriber.unsubscribe(full);
    };
    try {
      await entry.subscribed;
    } catch (err) {
      // Leave no handler behind that a later subscribe would assume is live.
      await unsubscribe().catch(() => {});
      throw err;
    }
    return unsubscribe;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.channels.clear();
    const sub = this.subscriber;
    this.subscriber = null;
    if (sub !== null) await closeClient(sub);
  }

  private connection(): Redis {
    if (this.subscriber === null) {
      const sub = this.client.duplicate();
      // Errors surface through the main client and ping(); an 'error' listener stops ioredis logging them.
      sub.on('error', () => {});
      sub.on('message', (channel: string, message: string) => this.deliver(channel, message));
      this.subscriber = sub;
    }
    return this.subscriber;
  }

  private deliver(channel: string, message: string): void {
    for (const sub of [...(this.channels.get(channel)?.subs ?? [])]) {
      try {
        sub.handler(message);
      } catch (err) {
        this.onHandlerError(channel, err);
      }
    }
  }
}

/** QUIT when connected (lets pending replies arrive), otherwise drop the socket at once. */
export async function closeClient(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}
