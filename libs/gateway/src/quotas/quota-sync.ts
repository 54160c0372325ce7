import { newId } from '@sluice/core';
import type { StateKey, StateStore, Unsubscribe } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';

export interface GenerationSyncDeps {
  state: StateStore;
  /** Holds a new random value after every edit. */
  generationKey: StateKey;
  channel: string;
  intervalMs: number;
  logger: Logger;
  /** Re-reads the shared configuration into this replica. */
  reload(): Promise<void>;
}

/**
 * Keeps one replica's copy of shared, API-edited configuration current (the RuleRepository's
 * scheme): an edit sets a new generation and broadcasts; every replica reloads on the message,
 * and polls the generation as a backstop for a message lost while its subscriber reconnected.
 */
export class GenerationSync {
  private generation: string | null = null;
  private unsubscribe: Unsubscribe | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: GenerationSyncDeps) {}

  async start(): Promise<void> {
    await this.deps.reload();
    this.generation = await this.deps.state.get(this.deps.generationKey);
    this.unsubscribe = await this.deps.state.subscribe(this.deps.channel, () => void this.apply());
    this.timer = setInterval(() => void this.poll(), this.deps.intervalMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.unsubscribe?.();
  }

  /** After an edit: reload here before answering, then tell the other replicas. */
  async announce(): Promise<void> {
    const generation = newId();
    await this.deps.state.set(this.deps.generationKey, generation);
    this.generation = generation;
    await this.deps.reload();
    await this.deps.state.publish(this.deps.channel, 'changed');
  }

  private async apply(): Promise<void> {
    try {
      // Read the generation first: an edit landing during the reload is then caught by the next poll.
      const generation = await this.deps.state.get(this.deps.generationKey);
      await this.deps.reload();
      this.generation = generation;
    } catch (err) {
      this.deps.logger.error({ err }, 'shared configuration refresh failed; keeping the previous one');
    }
  }

  private async poll(): Promise<void> {
    try {
      const generation = await this.deps.state.get(this.deps.generationKey);
      if (generation !== this.generation) await this.apply();
    } catch (err) {
      this.deps.logger.warn({ err }, 'shared configuration generation check failed');
    }
  }
}
