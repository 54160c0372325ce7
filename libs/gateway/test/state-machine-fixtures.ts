import { StateMachineConfig } from '@sluice/config';
import { ManualClock, type Action } from '@sluice/core';
import { MemoryStateStore, type EnqueueOptions, type QueueJobCount, type Scheduler } from '@sluice/state';
import { createLogger } from '@sluice/telemetry';
import { InternalEventBus, type InternalEvent } from '../src/events/internal-events.js';
import { StateMachineRegistry } from '../src/state-machines/state-machine.js';
import { StateMachineService } from '../src/state-machines/state-machine-service.js';

export const logger = createLogger({ level: 'silent', role: 'test' });

/** open → acknowledged → resolved, open → resolved; open times out to escalated after 60 s, escalated to resolved after 120 s. */
export const ALERT = StateMachineConfig.parse({
  name: 'alert',
  initial_state: 'open',
  states: ['open', 'acknowledged', 'escalated', 'resolved'],
  transitions: [
    { from: 'open', to: 'acknowledged', notify: true },
    { from: 'open', to: 'resolved' },
    { from: 'acknowledged', to: 'resolved', notify: true },
    { from: 'escalated', to: 'resolved' },
    { from: 'escalated', to: 'acknowledged' },
  ],
  timeouts: [
    { state: 'open', after_seconds: 60, transition_to: 'escalated' },
    { state: 'escalated', after_seconds: 120, transition_to: 'resolved' },
  ],
});

/** A Scheduler that only records what it was asked: tests run the jobs themselves, on a ManualClock. */
class RecordingScheduler implements Scheduler {
  readonly backend = 'memory' as const;
  readonly pending = new Map<string, EnqueueOptions & { kind: string }>();
  readonly cancelled: string[] = [];

  async enqueue(kind: string, opts: EnqueueOptions): Promise<{ enqueued: boolean }> {
    if (this.pending.has(opts.id)) return { enqueued: false };
    this.pending.set(opts.id, { ...opts, kind });
    return { enqueued: true };
  }
  async repeat(): Promise<void> {}
  async cancel(_kind: string, id: string): Promise<boolean> {
    this.cancelled.push(id);
    return this.pending.delete(id);
  }
  consume(): void {}
  async start(): Promise<void> {}
  async close(): Promise<void> {}
  async jobCounts(): Promise<QueueJobCount[]> {
    return [];
  }
}

export function setup(machines = [ALERT], start = Date.UTC(2026, 2, 5, 14, 30)) {
  const clock = new ManualClock(start);
  const state = new MemoryStateStore({ clock });
  const scheduler = new RecordingScheduler();
  const emitted: InternalEvent[] = [];
  const events = new InternalEventBus();
  events.on((e) => emitted.push(e));
  const service = new StateMachineService({ state, scheduler, clock, logger, events, machines: new StateMachineRegistry(machines) });
  return { clock, state, scheduler, emitted, events, service };
}

let n = 0;
export function action(over: Partial<Action> = {}): Action {
  n += 1;
  return {
    id: `a${n}`,
    namespace: 'ns',
    tenant: 't',
    provider: 'p',
    action_type: 'alert',
    payload: {},
    metadata: {},
    created_at: '2026-03-05T14:30:00.000Z',
    ...over,
  };
}
