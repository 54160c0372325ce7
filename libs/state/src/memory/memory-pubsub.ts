import type { Unsubscribe } from '../state-store.js';

type Handler = (message: string) => void;

/**
 * In-process pub/sub. Delivery is queued with queueMicrotask, so publish never re-enters the
 * caller (as over Redis, where a message always arrives on a later tick).
 */
export class LocalBus {
  private readonly channels = new Map<string, Set<{ handler: Handler }>>();

  constructor(private readonly onHandlerError: (channel: string, err: unknown) => void) {}

  publish(channel: string, message: string): void {
    const subs = this.channels.get(channel);
    if (subs === undefined) return;
    for (const sub of subs) {
      queueMicrotask(() => {
        // Unsubscribed before delivery: drop, as Redis does once UNSUBSCRIBE is processed.
        if (!this.channels.get(channel)?.has(sub)) return;
        try {
          sub.handler(message);
        } catch (err) {
          this.onHandlerError(channel, err);
        }
      });
    }
  }

  subscribe(channel: string, handler: Handler): Unsubscribe {
    const sub = { handler };
    let subs = this.channels.get(channel);
    if (subs === undefined) {
      subs = new Set();
      this.channels.set(channel, subs);
    }
    subs.add(sub);
    return async () => {
      const current = this.channels.get(channel);
      if (current?.delete(sub) && current.size === 0) this.channels.delete(channel);
    };
  }

  close(): void {
    this.channels.clear();
  }
}
