import { newId, oneAtATime, type Clock, type TimerHandle } from '@sluice/core';
import { throttleErrors } from '../error-reports.js';
import type { StateKey, StateStore, Unsubscribe } from '../state-store.js';

/** The two log levels a sync reports at. */
export interface SyncLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface GenerationSyncDeps {
  state: StateStore;
  clock: Clock;
  /** Holds a new value after every edit. */
  generationKey: StateKey;
  channel: string;
  /** How often the generation is polled, as a backstop for a message lost while the subscriber reconnected. */
  intervalMs: number;
  /** Where a failed refresh or poll is reported (the previous copy stays in use); a pino logger fits. */
  log: SyncLog;
  /** Re-reads the shared data into this replica; `tag` is the one the edit was announced with. */
  reload(tag: string): Promise<void>;
}

/**
 * Keeps one replica's copy of shared, API-edited data (rules, quota and retention policies...)
 * current: an edit sets a new generation and broadcasts; every replica reloads on the message,
 * and polls the generation as a backstop. A generation carries a tag (`<id>:<tag>`) saying what
 * kind of reload it asks for.
 */
const DEFAULT_TAG = 'changed';

function tagOf(generation: string | null): string {
  const at = generation?.lastIndexOf(':') ?? -1;
  return generation && at >= 0 ? generation.slice(at + 1) : DEFAULT_TAG;
}

export class GenerationSync {
  private generation: string | null = null;
  private unsubscribe: Unsubscribe | null = null;
  private timer: TimerHandle | null = null;
  /** Reloads run one after another, so an older one can never finish last and install older data. */
  private reloading: Promise<void> = Promise.resolve();

  constructor(private readonly deps: GenerationSyncDeps) {}

  /**
   * Listens first, then reads the generation, then loads: an edit landing at any point of that
   * is either heard or seen by the next poll as a generation newer than the one read.
   */
  async start(): Promise<void> {
    this.unsubscribe = await this.deps.state.subscribe(this.deps.channel, () => void this.apply());
    this.generation = await this.deps.state.get(this.deps.generationKey);
    await this.reload(DEFAULT_TAG);
    this.timer = this.deps.clock.setRepeating(() => void this.poll(), this.deps.intervalMs);
  }

  async close(): Promise<void> {
    this.timer?.cancel();
    await this.unsubscribe?.();
  }

  /** After an edit: reload here before answering, then tell the other replicas. */
  async announce(tag: string = DEFAULT_TAG): Promise<void> {
    const generation = `${newId()}:${tag}`;
    await this.deps.state.set(this.deps.generationKey, generation);
    await this.reload(tag);
    // Only once loaded: a failed reload leaves the old generation, so the next poll tries again.
    this.generation = generation;
    await this.deps.state.publish(this.deps.channel, tag);
  }

  private async apply(): Promise<void> {
    try {
      // Read the generation first: an edit landing during the reload is then caught by the next poll.
      const generation = await this.deps.state.get(this.deps.generationKey);
      // Our own broadcast (or one whose data we already hold): nothing new to load. A bulk of
      // edits on one replica would otherwise reload everything twice per edit.
      if (generation !== null && generation === this.generation) return;
      await this.reload(tagOf(generation));
      this.generation = generation;
    } catch (err) {
      this.deps.log.error({ err }, 'shared configuration refresh failed; keeping the previous one');
    }
  }

  private reload(tag: string): Promise<void> {
    const run = this.reloading.then(() => this.deps.reload(tag));
    // The queue goes on after a failed reload; the caller still sees the failure.
    this.reloading = run.catch(() => {});
    return run;
  }

  /** While Redis is away every tick fails the same way: one line per message per 30 s. */
  private readonly checkFailed = throttleErrors((err, { suppressed }) =>
    this.deps.log.warn({ err, suppressed }, 'shared configuration generation check failed'),
  );

  /** One check at a time: a tick finding one in flight is skipped rather than piling up reads. */
  private readonly poll = oneAtATime(async () => {
    try {
      const generation = await this.deps.state.get(this.deps.generationKey);
      if (generation !== this.generation) await this.apply();
    } catch (err) {
      this.checkFailed(err);
    }
  });
}
