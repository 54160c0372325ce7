import { randomUUID } from 'node:crypto';
import { oneAtATime, type Clock, type TimerHandle } from '@sluice/core';
import type { StateStore, Unsubscribe } from '@sluice/state';
import { type Logger, logThrottle } from '@sluice/telemetry';
import type { InternalEvent, InternalEventBus } from '../events/internal-events.js';
import { ConnectionLeases } from './connection-leases.js';
import { matches, streamEventOf, type StreamEvent, type StreamFilter } from './stream-event.js';
import { StreamSubscriber, type FrameSink } from './stream-subscriber.js';

/** Pub/sub channels of cluster scope: the events themselves, and "someone just subscribed". */
const EVENTS_CHANNEL = 'stream-events';
const SUBSCRIBED_CHANNEL = 'stream-subscribed';

export interface StreamServiceDeps {
  state: StateStore;
  clock: Clock;
  logger: Logger;
  bus: InternalEventBus;
  /** cluster: events travel through the state store's pub/sub to every replica; local: this process's only. */
  scope: 'cluster' | 'local';
  maxConnectionsPerBucket: number;
  maxQueued: number;
  keepAliveMs: number;
  leaseTtlMs: number;
  /** How often a process asks whether anyone in the cluster listens (cluster scope). */
  checkIntervalMs: number;
  /** Told of this process's number of open streams whenever it changes (the sluice_stream_connections gauge). */
  onConnections(count: number): void;
}

/** A client's slot in its bucket's connection count; give it back when the client goes. */
export interface StreamConnection {
  id: string;
  release(): Promise<void>;
}

/**
 * The SSE stream of one process. It listens to the internal event bus only while someone
 * listens to the stream (locally, or in cluster scope anywhere in the cluster), so a dispatch
 * pays nothing for it otherwise. Events are redacted as they leave the bus; in cluster scope
 * they go through pub/sub, so a client on any replica sees every replica's and worker's events.
 */
export class StreamService {
  private readonly subscribers = new Set<StreamSubscriber>();
  private readonly held = new Map<string, string>();
  private readonly leases: ConnectionLeases;
  private readonly log: Logger;
  private readonly timers: TimerHandle[] = [];
  private readonly unsubscribes: Unsubscribe[] = [];
  private eventsSubscribed: Promise<void> | null = null;
  private busOff: (() => void) | null = null;

  constructor(private readonly deps: StreamServiceDeps) {
    this.log = deps.logger.child({ component: 'stream' });
    this.leases = new ConnectionLeases(deps.state, deps.clock, deps.leaseTtlMs);
  }

  async start(): Promise<void> {
    const { clock } = this.deps;
    this.timers.push(clock.setRepeating(() => this.keepAlive(), this.deps.keepAliveMs));
    this.timers.push(clock.setRepeating(() => void this.renew(), Math.max(1, Math.floor(this.deps.leaseTtlMs / 3))));
    if (this.deps.scope !== 'cluster') return;
    this.unsubscribes.push(await this.deps.state.subscribe(SUBSCRIBED_CHANNEL, () => this.listen(true)));
    this.timers.push(clock.setRepeating(() => void this.checkListeners(), this.deps.checkIntervalMs));
    await this.checkListeners();
  }

  async close(): Promise<void> {
    for (const t of this.timers) t.cancel();
    this.listen(false);
    for (const sub of this.subscribers) sub.close();
    this.subscribers.clear();
    for (const off of this.unsubscribes) await off();
    await Promise.all([...this.held].map(([id, bucket]) => this.leases.release(bucket, id).catch(() => undefined)));
    this.held.clear();
  }

  /**
   * When a refused client may try again: a slot frees when a stream closes, and at the latest when
   * the lease of a stream whose replica died runs out.
   */
  get retryAfterSeconds(): number {
    return Math.ceil(this.deps.leaseTtlMs / 1000);
  }

  /** Takes a slot in `bucket` (a tenant, or a caller); null when its cluster-wide cap is reached. */
  async open(bucket: string): Promise<StreamConnection | null> {
    const id = randomUUID();
    if (!(await this.leases.acquire(bucket, id, this.deps.maxConnectionsPerBucket))) return null;
    this.held.set(id, bucket);
    return {
      id,
      release: async () => {
        this.held.delete(id);
        await this.leases.release(bucket, id);
      },
    };
  }

  /** Starts delivering matching events to `sink`; returns what stops it. */
  async subscribe(sink: FrameSink, filter: StreamFilter, visible: (scope: { namespace: string; tenant: string }) => boolean): Promise<() => void> {
    const sub = new StreamSubscriber(sink, this.deps.maxQueued, (event) => matches(event, filter, visible));
    // Added once the subscription is live: a failure on the way leaves nothing behind.
    if (this.deps.scope === 'cluster') {
      this.eventsSubscribed ??= this.deps.state
        .subscribe(EVENTS_CHANNEL, (m) => this.deliver(JSON.parse(m) as StreamEvent))
        .then(
          (off) => {
            this.unsubscribes.push(off);
          },
          (err: unknown) => {
            this.eventsSubscribed = null; // the next client tries again
            throw err;
          },
        );
      await this.eventsSubscribed;
      await this.deps.state.publish(SUBSCRIBED_CHANNEL, '1');
    }
    this.subscribers.add(sub);
    this.deps.onConnections(this.subscribers.size);
    this.listen(true);
    return () => {
      sub.close();
      this.subscribers.delete(sub);
      this.deps.onConnections(this.subscribers.size);
      if (this.deps.scope === 'local' && this.subscribers.size === 0) this.listen(false);
    };
  }

  private listen(on: boolean): void {
    if (on && !this.busOff) this.busOff = this.deps.bus.on((event) => this.fromBus(event));
    if (!on && this.busOff) {
      this.busOff();
      this.busOff = null;
    }
  }

  private fromBus(event: InternalEvent): void {
    const streamed = streamEventOf(event);
    if (!streamed) return;
    if (this.deps.scope === 'local') {
      this.deliver(streamed);
      return;
    }
    this.deps.state.publish(EVENTS_CHANNEL, JSON.stringify(streamed)).catch((err: unknown) => {
      const suppressed = this.publishFailedLine('publish');
      if (suppressed !== null) this.log.warn({ err, suppressed }, 'stream event not published');
    });
  }

  /** While Redis is away every event's publish fails: one line per 30 s, not one per event. */
  private readonly publishFailedLine = logThrottle(30_000, () => this.deps.clock.now());

  private deliver(event: StreamEvent): void {
    for (const sub of this.subscribers) sub.offer(event);
  }

  private keepAlive(): void {
    for (const sub of this.subscribers) sub.keepAlive();
  }

  /** One renewal at a time, like checkListeners. */
  private readonly renew = oneAtATime(async () => {
    if (this.held.size === 0) return;
    const renewing = new Map(this.held);
    try {
      await this.leases.renew(renewing);
      // A connection released while its renewal was in flight: take back what the renewal re-added.
      await Promise.all([...renewing].filter(([id]) => !this.held.has(id)).map(([id, bucket]) => this.leases.release(bucket, id)));
    } catch (err) {
      this.log.warn({ err }, 'stream leases not renewed');
    }
  });

  /** While Redis is away every check fails the same way: one line per message per 30 s. */
  private readonly checkFailedLine = logThrottle(30_000, () => this.deps.clock.now());

  /** One check at a time (see oneAtATime): the period is short and the store may be slower. */
  private readonly checkListeners = oneAtATime(async () => {
    try {
      this.listen(this.subscribers.size > 0 || (await this.leases.anyLive()));
    } catch (err) {
      const suppressed = this.checkFailedLine(err instanceof Error ? err.message : String(err));
      if (suppressed !== null) this.log.warn({ err, suppressed }, 'could not tell whether anyone listens to the stream');
    }
  });
}
