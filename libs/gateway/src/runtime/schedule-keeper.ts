import { isoString, type Clock, type TimerHandle } from '@sluice/core';
import { GLOBAL_SCOPE, type StateKey, type StateStore } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';

/** Written after every declaration; its absence means the schedules went with it. */
const DECLARED_MARKER: StateKey = { kind: 'schedules-declared', ...GLOBAL_SCOPE, id: 'current' };

interface ScheduleKeeperDeps {
  state: StateStore;
  clock: Clock;
  logger: Logger;
  /** Every feature's declarations; idempotent. */
  declare: () => Promise<void>;
  /** Every feature's repairs: single schedules a dead process left undeclared, fixed ones' dropped runs; idempotent. */
  repair: () => Promise<void>;
  checkIntervalMs: number;
}

/**
 * Keeps the repeatable schedules (reapers, sweeps, recurring actions) declared in Redis. A reconnect
 * already declares them again (the worker's start-up); this covers a Redis that lost them while
 * the connection stayed up — a FLUSHALL, a key deleted by hand — which no reconnect reports, and
 * single schedules an API replica killed between a write and its schedule never declared.
 * The in-process scheduler of the memory backend cannot lose them, so there is nothing to watch.
 */
export class ScheduleKeeper {
  private timer: TimerHandle | null = null;
  private checking = false;

  constructor(private readonly deps: ScheduleKeeperDeps) {}

  async declare(): Promise<void> {
    await this.deps.declare();
    if (this.deps.state.backend === 'redis') await this.deps.state.set(DECLARED_MARKER, isoString(this.deps.clock.now()));
  }

  watch(): void {
    if (this.deps.state.backend !== 'redis' || this.timer) return;
    this.timer = this.deps.clock.setRepeating(() => void this.check(), this.deps.checkIntervalMs);
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  private async check(): Promise<void> {
    if (this.checking || !this.deps.state.available()) return; // away: the reconnect declares them
    this.checking = true;
    try {
      if ((await this.deps.state.get(DECLARED_MARKER)) !== null) {
        await this.deps.repair();
        return;
      }
      await this.declare();
      this.deps.logger.warn({ component: 'worker' }, 'schedules were gone from the state backend (flushed?); declared again');
    } catch (err) {
      this.deps.logger.warn({ component: 'worker', err }, 'checking the declared schedules failed; the next check retries');
    } finally {
      this.checking = false;
    }
  }
}
