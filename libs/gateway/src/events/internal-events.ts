/**
 * What background work reports as it happens (a group flushed, a state timed out, a recurring
 * action fired). Process-local: the SSE stream will subscribe to it; listeners must be quick and
 * must not throw (a throwing listener is isolated and reported through `onListenerError`).
 */
export interface InternalEvent {
  type: string;
  namespace: string;
  tenant: string;
  /** RFC 3339. */
  at: string;
  data: Record<string, unknown>;
}

export type InternalEventListener = (event: InternalEvent) => void;

export class InternalEventBus {
  private readonly listeners = new Set<InternalEventListener>();

  constructor(
    private readonly opts: {
      /** Counts every emitted event (sluice_internal_events_total{type}). */
      onEmit?: (type: string) => void;
      onListenerError?: (err: unknown, event: InternalEvent) => void;
    } = {},
  ) {}

  emit(event: InternalEvent): void {
    this.opts.onEmit?.(event.type);
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        this.opts.onListenerError?.(err, event);
      }
    }
  }

  /** Whether anyone listens: emitters whose events cost something to build check it first. */
  get active(): boolean {
    return this.listeners.size > 0;
  }

  /** Returns the function that removes the listener. */
  on(listener: InternalEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
