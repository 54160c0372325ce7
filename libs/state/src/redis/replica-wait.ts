import type { Redis } from 'ioredis';
import calculateSlot from 'cluster-key-slot';
import { isCluster, type RedisClient } from './connection.js';

/** `state.wait_replicas`: how many replicas a write that must survive a failover waits for, and for how long. */
export interface ReplicaWait {
  replicas: number;
  timeoutMs: number;
  /** A write answered before enough replicas confirmed it (WAIT timed out or failed): `acked` did. */
  onShort?: (acked: number) => void;
}

/*
 * Redis replicates asynchronously: a write the primary acknowledged can be lost if the primary
 * dies before a replica has it. WAIT blocks until `replicas` replicas have every write made on
 * its connection so far, or the timeout passes; it blocks that connection meanwhile, so the
 * writes that wait have a connection of their own (the store's `durable` client), and their
 * WAITs are grouped: one in flight per connection, and every write answered meanwhile shares the
 * next. Without a replica (one was lost) a write then waits at most two timeouts, instead of
 * queueing behind every other write's timeout.
 */
export class ReplicaWaiter {
  private readonly byConnection = new WeakMap<Redis, GroupedWait>();

  constructor(
    private readonly client: RedisClient,
    private readonly wait: ReplicaWait,
  ) {}

  /** Resolves once the write to `key`, already answered, is on enough replicas (or counted short). */
  async afterWrite(key: string): Promise<void> {
    const connection = this.connectionOf(key);
    let acked = 0;
    if (connection !== null) {
      let grouped = this.byConnection.get(connection);
      if (grouped === undefined) {
        grouped = new GroupedWait(connection, this.wait);
        this.byConnection.set(connection, grouped);
      }
      // A failed WAIT (the connection went away) confirms nothing: the write stands, counted short.
      acked = await grouped.next().catch(() => 0);
    }
    if (acked < this.wait.replicas) this.wait.onShort?.(acked);
  }

  /** The connection that took a write to `key`: the client itself, or on a Cluster the primary serving its slot. */
  private connectionOf(key: string): Redis | null {
    if (!isCluster(this.client)) return this.client;
    const address = this.client.slots[calculateSlot(key)]?.[0];
    return this.client.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === address) ?? null;
  }
}

/** The WAITs of one connection: at most one in flight, and one queued for the writes answered meanwhile. */
class GroupedWait {
  private current: Promise<number> | null = null;
  private queued: Promise<number> | null = null;

  constructor(
    private readonly connection: Redis,
    private readonly wait: ReplicaWait,
  ) {}

  next(): Promise<number> {
    if (this.current === null) return this.send();
    // The WAIT in flight may have been sent before the caller's write: it needs the next one.
    this.queued ??= this.current
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        this.queued = null;
        return this.send();
      });
    return this.queued;
  }

  private send(): Promise<number> {
    const sent = (this.connection.call('WAIT', this.wait.replicas, this.wait.timeoutMs) as Promise<unknown>).then(Number);
    this.current = sent;
    const settle = () => {
      if (this.current === sent) this.current = null;
    };
    sent.then(settle, settle);
    return sent;
  }
}
