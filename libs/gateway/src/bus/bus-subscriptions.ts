import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { BusSubscription, errors, isoString, newId, type BusSubscriptionInput, type BusTopic, type Clock } from '@sluice/core';
import { RecordRepository, type LogDelivery, type StateKey, type StateStore } from '@sluice/state';
import { decodeWith } from '../policies/schema-decoder.js';
import { topicLog } from './bus-topics.js';

/** Key kinds of subscriptions and of their dead-letter streams: never rename without a migration. */
const SUBSCRIPTION_KIND = 'bus-subscription';
const DEAD_KIND = 'bus-dead';
/** How often a long poll looks again while nothing is ready. */
const POLL_MS = 100;
const DEAD_LETTER_MAX_LEN = 10_000;
/**
 * A subscription's consumer holding nothing, idle this long, is forgotten: readers come and go
 * under new names (a pod per restart), and each name stayed in the group for good. A live one
 * is created again by its next read.
 */
const FORGET_IDLE_AFTER_MS = 10 * 60_000;
/** How often one process forgets a subscription's idle consumers, at most (on a receive). */
const FORGET_EVERY_MS = 60_000;
/** Subscriptions this process remembers forgetting for; past it, it starts over (a forget more). */
const FORGOTTEN_FOR_MAX = 10_000;

export interface BusMessage {
  message_id: string;
  payload: unknown;
  published_at: string;
  deliveries: number;
}

/** Receives for one open stream (see BusSubscriptions.openStream); close it when the stream ends. */
export interface BusStreamReader {
  receive(max: number, waitMs: number, stop?: AbortSignal): Promise<BusMessage[]>;
  close(): Promise<void>;
}

interface ReceiveOptions {
  max: number;
  waitMs: number;
  stop: AbortSignal | undefined;
  /** Reclaim only what other consumers left (a stream's own messages are still in flight). */
  othersOnly: boolean;
}

export interface SubscriptionsDeps {
  state: StateStore;
  clock: Clock;
  visibilityTimeoutMs: number;
  maxDeliveries: number;
  /** A consumer holding nothing, idle this long, is forgotten (default 10 minutes, at least twice the visibility timeout). */
  forgetIdleAfterMs?: number | undefined;
}

const deadLog = (s: BusSubscription): StateKey => ({ kind: DEAD_KIND, namespace: s.namespace, tenant: s.tenant, id: s.id });

/**
 * Subscriptions to bus topics: each is a consumer group on the topic's stream, so the state store
 * (Redis) decides who gets what. A message goes to one consumer and stays pending until acked;
 * one left pending past the visibility timeout goes to the next consumer that asks (a consumer
 * that died hands its messages on), and one delivered `maxDeliveries` times without an ack moves
 * to the subscription's dead-letter stream instead of being handed out again.
 */
export class BusSubscriptions {
  private readonly records: RecordRepository<BusSubscription>;
  /** When this process last forgot idle consumers, per subscription. */
  private readonly forgotAt = new Map<string, number>();

  constructor(private readonly deps: SubscriptionsDeps) {
    this.records = new RecordRepository<BusSubscription>({
      state: deps.state,
      clock: deps.clock,
      kind: SUBSCRIPTION_KIND,
      label: 'bus subscription',
      decode: decodeWith(BusSubscription),
      globalIds: true,
    });
  }

  async create(topic: BusTopic, input: BusSubscriptionInput): Promise<BusSubscription> {
    const subscription: BusSubscription = {
      id: newId(),
      topic: topic.topic,
      namespace: topic.namespace,
      tenant: topic.tenant,
      from: input.from,
      created_at: isoString(this.deps.clock.now()),
    };
    await this.deps.state.logGroupCreate(logOf(subscription), subscription.id, input.from === 'earliest' ? 'start' : 'end');
    if ((await this.records.create(subscription)) !== 'created') throw new Error(`bus subscription id ${subscription.id} could not be claimed`);
    return subscription;
  }

  /** Deletes the subscriptions of a deleted topic, and their dead-letter streams (its own stream and groups went with it). */
  async removeOf(topic: { namespace: string; tenant: string; topic: string }): Promise<void> {
    const subscriptions = (await this.records.listIn({ namespace: topic.namespace, tenant: topic.tenant })).filter((s) => s.topic === topic.topic);
    for (const s of subscriptions) {
      await this.records.remove(s.id);
      await this.deps.state.delete(deadLog(s));
    }
  }

  async get(id: string): Promise<BusSubscription> {
    const found = await this.records.find(id);
    if (!found) throw errors.notFound('bus subscription', id);
    return found.record;
  }

  /**
   * Up to `max` messages for `consumer`: ones left unacknowledged past the visibility timeout
   * first (by any consumer, this one too: a poll that did not ack in time gets them again), then
   * new ones; waits up to `waitMs` for one, or until `stop` (the server closing) aborts.
   */
  receive(s: BusSubscription, consumer: string, max: number, waitMs: number, stop?: AbortSignal): Promise<BusMessage[]> {
    return this.receiveAs(s, consumer, { max, waitMs, stop, othersOnly: false });
  }

  /**
   * A reader for one open stream: a consumer of its own (`<consumer>~<random>`), that reclaims
   * only what other consumers left. What the stream was sent waits for its ack while it is open:
   * never sent on it again, never dead-lettered by it; another consumer may take it after the
   * visibility timeout, as from any slow consumer, and so may a later stream of the same client.
   */
  openStream(s: BusSubscription, consumer: string): BusStreamReader {
    const own = `${consumer}~${randomBytes(6).toString('hex')}`;
    return {
      receive: (max, waitMs, stop) => this.receiveAs(s, own, { max, waitMs, stop, othersOnly: true }),
      // It goes now unless it still holds messages; those keep it until claimed, then it is forgotten as idle.
      close: () => this.deps.state.logGroupRemoveConsumer(logOf(s), s.id, own).then(() => undefined),
    };
  }

  private async receiveAs(s: BusSubscription, consumer: string, opts: ReceiveOptions): Promise<BusMessage[]> {
    this.forgetIdleConsumers(s);
    const until = Date.now() + opts.waitMs;
    for (;;) {
      const messages = await groupOf(s, () => this.receiveFromGroup(s, consumer, opts.max, opts.othersOnly));
      if (messages.length > 0 || Date.now() >= until || opts.stop?.aborted) return messages;
      await sleep(Math.min(POLL_MS, Math.max(0, until - Date.now())), undefined, { signal: opts.stop }).catch(() => undefined);
    }
  }

  async ack(s: BusSubscription, ids: readonly string[]): Promise<number> {
    return groupOf(s, () => this.deps.state.logGroupAck(logOf(s), s.id, ids));
  }

  /** The group's counts, and how many messages the topic holds now: undelivered equal to it means the topic was trimmed up to the subscription. */
  async lag(s: BusSubscription): Promise<{ pending: number; undelivered: number; held: number }> {
    const counts = await groupOf(s, () => this.deps.state.logGroupLag(logOf(s), s.id));
    return { ...counts, held: await this.deps.state.logLength(logOf(s)) };
  }

  async deadLetters(s: BusSubscription, limit: number): Promise<(BusMessage & { dead_lettered_at: string })[]> {
    const entries = await this.deps.state.logRange(deadLog(s), { limit });
    return entries.map((e) => JSON.parse(e.message) as BusMessage & { dead_lettered_at: string });
  }

  /** In the background, at most every FORGET_EVERY_MS per subscription: housekeeping, never the receive's concern. */
  private forgetIdleConsumers(s: BusSubscription): void {
    const now = Date.now();
    const idleMs = this.deps.forgetIdleAfterMs ?? Math.max(FORGET_IDLE_AFTER_MS, 2 * this.deps.visibilityTimeoutMs);
    if (now - (this.forgotAt.get(s.id) ?? 0) < Math.min(FORGET_EVERY_MS, idleMs)) return;
    if (this.forgotAt.size >= FORGOTTEN_FOR_MAX) this.forgotAt.clear();
    this.forgotAt.set(s.id, now);
    void this.deps.state.logGroupForgetIdle(logOf(s), s.id, idleMs).catch(() => {}); // the next one tries again
  }

  private async receiveFromGroup(s: BusSubscription, consumer: string, max: number, othersOnly: boolean): Promise<BusMessage[]> {
    const log = logOf(s);
    const reclaimed = await this.deps.state.logGroupClaim(log, s.id, consumer, this.deps.visibilityTimeoutMs, max, { othersOnly });
    const live: LogDelivery[] = [];
    for (const d of reclaimed) {
      if (d.deliveries <= this.deps.maxDeliveries) live.push(d);
      else await this.deadLetter(s, d);
    }
    const fresh = live.length < max ? await this.deps.state.logGroupRead(log, s.id, consumer, max - live.length) : [];
    return [...live, ...fresh].map(messageOf);
  }

  /** Appended to the dead-letter stream first, then acknowledged: a crash in between leaves it pending, never lost. */
  private async deadLetter(s: BusSubscription, d: LogDelivery): Promise<void> {
    const message = { ...messageOf({ ...d, deliveries: d.deliveries - 1 }), dead_lettered_at: isoString(this.deps.clock.now()) };
    await this.deps.state.logAppend(deadLog(s), JSON.stringify(message), DEAD_LETTER_MAX_LEN);
    await this.deps.state.logGroupAck(logOf(s), s.id, [d.id]);
  }
}

/** Runs a group operation; the group is gone with its topic's stream (the topic was deleted): 404. */
async function groupOf<T>(s: BusSubscription, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof Error && /NOGROUP|no such key/i.test(err.message)) throw errors.notFound('bus subscription stream (was its topic deleted?)', s.id);
    throw err;
  }
}

function logOf(s: BusSubscription): StateKey {
  const name = s.topic.slice(`${s.namespace}.${s.tenant}.`.length);
  return topicLog({ namespace: s.namespace, tenant: s.tenant, name });
}

function messageOf(d: LogDelivery): BusMessage {
  const stored = JSON.parse(d.message) as { payload: unknown; published_at: string };
  return { message_id: d.id, payload: stored.payload, published_at: stored.published_at, deliveries: d.deliveries };
}
