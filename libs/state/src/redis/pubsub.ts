import type { Redis } from 'ioredis';
import { closeClient, isCluster, type RedisClient } from './connection.js';
import { channelName } from '../keys.js';
import type { Unsubscribe } from '../state-store.js';

type Handler = (message: string) => void;

/**
 * Pub/sub over a dedicated subscriber connection, created on the first subscribe (a connection
 * in subscriber mode cannot run other commands). One Redis SUBSCRIBE per channel, fanned out
 * to every local handler. On Redis Cluster, sharded pub/sub (SPUBLISH/SSUBSCRIBE, Redis 7): a
 * channel lives on the primary of its slot, so its messages keep their order (plain PUBLISH goes
 * to any node and is broadcast over the cluster bus, in no common order) and do not load every node.
 */
export class RedisPubSub {
  private subscriber: RedisClient | null = null;
  /** Per Redis channel: local handlers, and the SUBSCRIBE every one of them waits for. */
  private readonly channels = new Map<string, { subs: Set<{ handler: Handler }>; subscribed: Promise<unknown> }>();
  private closed = false;
  private readonly sharded: boolean;
  /** The prefix of channel names: the key prefix, and the database when it is not 0. */
  private readonly prefix: string;

  constructor(
    private readonly client: RedisClient,
    keyPrefix: string,
    private readonly onHandlerError: (channel: string, err: unknown) => void,
  ) {
    this.sharded = isCluster(client);
    // Pub/sub ignores the database: gateways sharing a Redis on db 3 and db 4 (staging, production)
    // would hear each other's channels — the live stream's events among them.
    const db = isCluster(client) ? 0 : (client.options.db ?? 0);
    this.prefix = db === 0 ? keyPrefix : `${keyPrefix}:db${db}`;
    if (!isCluster(client)) this.followReconnects(client);
  }

  /**
   * A subscriber only reads, so it never meets the READONLY that moves the main client off a
   * primary demoted by a managed failover (its address moved to the new one): it stayed on the
   * old node, hearing only what that node still replicated, and nothing once it was cut off. Each
   * time the main client connects again, a connected subscriber does too (and subscribes again),
   * to wherever the address leads now. Messages published meanwhile are missed, as in any reconnect.
   */
  private followReconnects(client: Redis): void {
    let connections = client.status === 'ready' ? 1 : 0;
    client.on('ready', () => {
      connections += 1;
      const sub = this.subscriber;
      if (connections > 1 && sub !== null && sub.status === 'ready') sub.disconnect(true);
    });
  }

  async publish(channel: string, message: string): Promise<void> {
    const full = channelName(this.prefix, channel);
    if (isCluster(this.client)) await this.client.spublish(full, message);
    else await this.client.publish(full, message);
  }

  /** Resolves once Redis has confirmed the subscription, so later publishes are delivered. */
  async subscribe(channel: string, handler: Handler): Promise<Unsubscribe> {
    if (this.closed) throw new Error('state store is closed');
    const full = channelName(this.prefix, channel);
    const sub = { handler };
    let entry = this.channels.get(full);
    // Commands are issued synchronously, in call order, so SUBSCRIBE/UNSUBSCRIBE cannot reorder.
    if (entry === undefined) {
      const connection = this.connection();
      entry = { subs: new Set(), subscribed: this.sharded ? connection.ssubscribe(full) : connection.subscribe(full) };
      this.channels.set(full, entry);
    }
    entry.subs.add(sub);
    const unsubscribe = async (): Promise<void> => {
      const current = this.channels.get(full);
      if (current === undefined || !current.subs.delete(sub) || current.subs.size > 0) return;
      this.channels.delete(full);
      const connection = this.subscriber;
      if (connection === null) return;
      const sent = this.sharded ? connection.sunsubscribe(full) : connection.unsubscribe(full);
      // Not waited for: nothing is delivered for the channel from now on anyway, and with Redis
      // away or stalled the answer takes a command timeout (or, queued offline, comes after the
      // client's own re-subscribe when Redis is back) — a shutdown would wait that long for
      // every subscriber, one part after another.
      void sent.catch(() => {});
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

  private connection(): RedisClient {
    let sub = this.subscriber;
    if (sub === null) {
      // The offline queue on whatever the main client's is now (turned off while Redis is away),
      // and kept through reconnects: a first subscribe made then waits for the connection, up to
      // the command timeout, instead of failing at once.
      sub = isCluster(this.client)
        ? this.client.duplicate(undefined, { shardedSubscribers: true })
        : this.client.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
      // Errors surface through the main client and ping(); an 'error' listener stops ioredis logging them.
      sub.on('error', () => {});
      sub.on(this.sharded ? 'smessage' : 'message', (channel: string, message: string) => this.deliver(channel, message));
      this.subscriber = sub;
    }
    return sub;
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
