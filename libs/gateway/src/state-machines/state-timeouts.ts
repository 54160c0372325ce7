import type { Clock } from '@sluice/core';
import type { Scheduler } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import { STATE_TIMEOUT_KIND, timeoutJobId } from './event-keys.js';
import { enteredAtMs, type EventRecord } from './event-record.js';

/** Everything the timeout job needs to recognise the stay it was armed for. */
export interface TimeoutJobData {
  namespace: string;
  tenant: string;
  fingerprint: string;
  state_machine: string;
  state: string;
  /** The version whose write entered `state`. */
  version: number;
  entered_at: string;
  transition_to: string;
}

export function isTimeoutJobData(data: unknown): data is TimeoutJobData {
  if (typeof data !== 'object' || data === null) return false;
  const d = data as Record<string, unknown>;
  return (
    ['namespace', 'tenant', 'fingerprint', 'state_machine', 'state', 'entered_at', 'transition_to'].every((k) => typeof d[k] === 'string') &&
    Number.isInteger(d.version)
  );
}

/**
 * Arms and disarms the timeout job of one stay in a timed state. Arming happens before the
 * write that enters the state, so an acknowledged transition never lacks its job even if the
 * process dies right after writing; a job whose write then lost its race (or never happened)
 * finds a different record when it runs and does nothing.
 */
export class StateTimeouts {
  constructor(private readonly deps: { scheduler: Scheduler; clock: Clock; logger: Logger }) {}

  static jobId(record: EventRecord, version: number): string {
    return timeoutJobId(record, version, enteredAtMs(record));
  }

  /** Enqueues the job for this record at this version when its state has a timeout (timeout_at set). */
  async arm(record: EventRecord, version: number, transitionTo: string): Promise<void> {
    if (record.timeout_at === null) return;
    const data: TimeoutJobData = {
      namespace: record.namespace,
      tenant: record.tenant,
      fingerprint: record.fingerprint,
      state_machine: record.state_machine,
      state: record.state,
      version,
      entered_at: record.updated_at,
      transition_to: transitionTo,
    };
    const delayMs = Math.max(0, Date.parse(record.timeout_at) - this.deps.clock.now());
    await this.deps.scheduler.enqueue(STATE_TIMEOUT_KIND, { id: StateTimeouts.jobId(record, version), data, delayMs });
  }

  /**
   * Cancels the pending job of a stay that just ended. Best effort: a job that escapes (already
   * running, or the cancel failed) finds a newer version when it runs and does nothing.
   */
  async disarm(record: EventRecord, version: number): Promise<void> {
    if (record.timeout_at === null) return;
    try {
      await this.deps.scheduler.cancel(STATE_TIMEOUT_KIND, StateTimeouts.jobId(record, version));
    } catch (err) {
      this.deps.logger.warn({ err, fingerprint: record.fingerprint }, 'could not cancel a superseded state timeout; it will find the event moved on');
    }
  }
}
