import {
  errors,
  type Action,
  type Clock,
  type DispatchOutcome,
  type EventList,
  type EventRecordView,
  type EventTransitionResult,
  type FailureCode,
  type StateChangedOutcome,
} from '@sluice/core';
import { RETRY, retryCas, type Scheduler, type StateStore } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import type { InternalEventBus } from '../events/internal-events.js';
import type { RetentionSource } from '../retention/retention-source.js';
import { EventRetention } from './event-retention.js';
import { EventStore } from './event-store.js';
import { toView, type EventRecord, type StoredEvent } from './event-record.js';
import { fingerprintOf } from './fingerprint.js';
import type { StateMachine, StateMachineRegistry } from './state-machine.js';
import { StateTimeouts, type TimeoutJobData } from './state-timeouts.js';
import { decideTransition } from './transition-decision.js';

export interface StateMachineServiceDeps {
  state: StateStore;
  scheduler: Scheduler;
  clock: Clock;
  logger: Logger;
  events: InternalEventBus;
  machines: StateMachineRegistry;
  /** Compare-and-swap rounds before a write under contention gives up (default 16). */
  maxCasAttempts?: number;
}

export type TransitionSource = 'dispatch' | 'api' | 'timeout';

/** Several writers kept winning the compare-and-swap: the caller may retry. */
class StateContentionError extends Error {
  constructor(fingerprint: string) {
    super(`event ${fingerprint} changed concurrently too many times; retry`);
    this.name = 'StateContentionError';
  }
}

/** A timeout job ran before the write that armed it is visible (or that write never landed): retry later. */
export class TimeoutNotVisibleError extends Error {
  constructor(fingerprint: string, version: number) {
    super(`event ${fingerprint} has no version ${version} yet`);
    this.name = 'TimeoutNotVisibleError';
  }
}

interface Scope {
  namespace: string;
  tenant: string;
  fingerprint: string;
}

/** What one read of the record decided. */
interface Step<R> {
  result: R;
  /** The record to store; absent when nothing changes. */
  write?: EventRecord;
  /** Set when the write moves the event to another state. */
  change?: { previous: string; next: string; notify: boolean };
}

/**
 * Event lifecycles: one record per (namespace, tenant, fingerprint), moved only by versioned
 * compare-and-swap, so concurrent transitions from any replicas settle one per version. A read
 * decides, the write is conditional on the version read, and a lost race re-reads and decides
 * again. Entering a state with a timeout arms one job (deterministic id per stay) that moves
 * the event on if it is still in that stay when the job runs.
 */
export class StateMachineService {
  private readonly store: EventStore;
  private readonly timeouts: StateTimeouts;
  private readonly log: Logger;
  private readonly maxAttempts: number;

  constructor(private readonly deps: StateMachineServiceDeps) {
    this.store = new EventStore(deps.state);
    this.log = deps.logger.child({ component: 'state-machines' });
    this.timeouts = new StateTimeouts({ scheduler: deps.scheduler, clock: deps.clock, logger: this.log });
    this.maxAttempts = deps.maxCasAttempts ?? 16;
  }

  /** Deletes events that rest in a terminal state past the retention policy's event_ttl_seconds (`maxScanned`: entries per pair per cycle). */
  retentionSource(opts: { maxScanned?: number } = {}): RetentionSource {
    return new EventRetention(this.store, this.deps.machines, this.log, opts);
  }

  /** The `state_machine` rule action: moves the action's event towards `action.status`. */
  async applyAction(action: Action, machineName: string, fingerprintFields: readonly string[] | undefined): Promise<DispatchOutcome> {
    const machine = this.deps.machines.get(machineName);
    if (!machine) return failed(action.id, 'STATE_MACHINE_NOT_FOUND', `state machine not found: ${machineName}`, false);
    const fingerprint = fingerprintOf(action, fingerprintFields);
    if (fingerprint === undefined) {
      return failed(action.id, 'FINGERPRINT_REQUIRED', `state machine ${machineName}: the action has no fingerprint and the rule no fingerprint_fields`, false);
    }
    const scope = { namespace: action.namespace, tenant: action.tenant, fingerprint };
    try {
      return await this.advance(scope, 'dispatch', { action_id: action.id }, (stored, nowMs): Step<StateChangedOutcome> => {
        const current = stored?.record.state ?? machine.initialState;
        const decision = decideTransition(machine, current, action.status ?? current);
        const base = { outcome: 'state_changed' as const, action_id: action.id, fingerprint, previous_state: current };
        const entering = (state: string, counts: boolean) => enter(machine, scope, stored?.record, action.action_type, state, nowMs, counts);
        if (decision.kind === 'move') {
          return {
            result: { ...base, new_state: decision.to, notify: decision.notify },
            write: entering(decision.to, true),
            change: { previous: current, next: decision.to, notify: decision.notify },
          };
        }
        // No move: a new event is still recorded (in its initial state), an existing one is left untouched.
        const write = stored ? undefined : entering(current, false);
        const result: StateChangedOutcome =
          decision.kind === 'stay'
            ? { ...base, new_state: current, notify: false }
            : { ...base, new_state: current, notify: false, requested_state: decision.requested, reason: decision.reason };
        return write ? { result, write } : { result };
      });
    } catch (err) {
      if (err instanceof StateContentionError) return failed(action.id, 'STATE_CONFLICT', err.message, true);
      throw err;
    }
  }

  /** PUT /v1/events/{fingerprint}/transition: 404 for an unknown event, 409 for a move its machine forbids. */
  async transition(namespace: string, tenant: string, fingerprint: string, to: string): Promise<EventTransitionResult> {
    const scope = { namespace, tenant, fingerprint };
    try {
      return await this.advance(scope, 'api', {}, (stored, nowMs): Step<EventTransitionResult> => {
        if (!stored) throw errors.notFound('event', fingerprint);
        const { record } = stored;
        const machine = this.deps.machines.get(record.state_machine);
        if (!machine) throw errors.conflict(`state machine ${record.state_machine} of event ${fingerprint} is not configured`);
        const decision = decideTransition(machine, record.state, to);
        if (decision.kind === 'refuse') {
          throw errors.conflict(
            decision.reason === 'unknown_state'
              ? `unknown state ${to} in state machine ${machine.name}`
              : `transition not allowed: ${record.state} -> ${to} (state machine ${machine.name})`,
          );
        }
        if (decision.kind === 'stay') return { result: { fingerprint, previous_state: record.state, new_state: record.state, notify: false } };
        return {
          result: { fingerprint, previous_state: record.state, new_state: decision.to, notify: decision.notify },
          write: enter(machine, scope, record, record.action_type, decision.to, nowMs, true),
          change: { previous: record.state, next: decision.to, notify: decision.notify },
        };
      });
    } catch (err) {
      if (err instanceof StateContentionError) throw errors.conflict(err.message);
      throw err;
    }
  }

  /**
   * The timeout job: moves the event on only if it is still in the stay the job was armed for
   * (same version, state and entry instant). Run twice, or after a later transition, it does
   * nothing; the compare-and-swap makes the move happen once however many workers try.
   */
  async fireTimeout(job: TimeoutJobData): Promise<'fired' | 'stale'> {
    const scope = { namespace: job.namespace, tenant: job.tenant, fingerprint: job.fingerprint };
    return this.advance(scope, 'timeout', {}, (stored, nowMs): Step<'fired' | 'stale'> => {
      if (!stored || stored.version < job.version) throw new TimeoutNotVisibleError(job.fingerprint, job.version);
      const { record } = stored;
      const sameStay =
        stored.version === job.version && record.state === job.state && record.state_machine === job.state_machine && record.updated_at === job.entered_at;
      if (!sameStay) return { result: 'stale' };
      const machine = this.deps.machines.get(record.state_machine);
      // The configuration may have changed since the job was armed: it decides where the event goes, if anywhere.
      const timeout = machine?.timeoutOf(record.state);
      if (!machine || !timeout) {
        this.log.warn(
          { fingerprint: job.fingerprint, state_machine: job.state_machine, state: job.state },
          'state timeout no longer configured; event left in place',
        );
        return { result: 'stale' };
      }
      const to = timeout.transitionTo;
      const notify = machine.transition(record.state, to)?.notify ?? false;
      return {
        result: 'fired',
        write: enter(machine, scope, record, record.action_type, to, nowMs, true),
        change: { previous: record.state, next: to, notify },
      };
    });
  }

  /**
   * `state.current` for rule conditions: the stored state of the event the action names by
   * `fingerprint`. Synchronous (no promise on the dispatch path) when the action names none.
   */
  currentState(action: Action): Promise<string | undefined> | undefined {
    if (action.fingerprint === undefined || action.fingerprint === '') return undefined;
    return this.store.get(action.namespace, action.tenant, action.fingerprint).then((stored) => stored?.record.state);
  }

  async get(namespace: string, tenant: string, fingerprint: string): Promise<EventRecordView | null> {
    const stored = await this.store.get(namespace, tenant, fingerprint);
    return stored ? toView(stored) : null;
  }

  async list(namespace: string, tenant: string, filter: { status?: string | undefined; limit: number }): Promise<EventList> {
    const events = (await this.store.list(namespace, tenant, filter)).map(toView);
    return { events, count: events.length };
  }

  /**
   * Read, decide, write if the version is unchanged; on a lost race read again. The timeout of
   * the state being entered is armed before the write (see StateTimeouts), the one of the stay
   * being left is disarmed after it.
   */
  private async advance<R>(
    scope: Scope,
    source: TransitionSource,
    extra: Record<string, unknown>,
    step: (stored: StoredEvent | null, nowMs: number) => Step<R>,
  ): Promise<R> {
    const onExhausted = (): never => {
      throw new StateContentionError(scope.fingerprint);
    };
    return retryCas<R>({ what: `event ${scope.fingerprint}`, attempts: this.maxAttempts, onExhausted }, async () => {
      const stored = await this.store.get(scope.namespace, scope.tenant, scope.fingerprint);
      const decided = step(stored, this.deps.clock.now());
      const next = decided.write;
      if (!next) return decided.result;
      const expected = stored?.version ?? 0;
      await this.armTimeout(next, expected + 1);
      const cas = await this.store.write(expected, next);
      if (!cas.ok) return RETRY;
      // A timeout run is the job of the stay it ends: nothing left to cancel.
      if (stored && source !== 'timeout') await this.timeouts.disarm(stored.record, stored.version);
      if (decided.change) this.report(scope, source, next, cas.version, decided.change, extra);
      return decided.result;
    });
  }

  private async armTimeout(record: EventRecord, version: number): Promise<void> {
    const timeout = this.deps.machines.get(record.state_machine)?.timeoutOf(record.state);
    if (timeout) await this.timeouts.arm(record, version, timeout.transitionTo);
  }

  private report(
    scope: Scope,
    source: TransitionSource,
    record: EventRecord,
    version: number,
    change: NonNullable<Step<unknown>['change']>,
    extra: Record<string, unknown>,
  ): void {
    const base = { namespace: scope.namespace, tenant: scope.tenant, at: record.updated_at };
    const moved = { fingerprint: scope.fingerprint, state_machine: record.state_machine, previous_state: change.previous, new_state: change.next };
    if (source === 'timeout') this.deps.events.emit({ type: 'timeout', ...base, data: moved });
    this.deps.events.emit({ type: 'state_changed', ...base, data: { ...moved, notify: change.notify, source, version, ...extra } });
  }
}

/** The record after entering `state` at nowMs (counts: it is a transition, not the creation). */
function enter(
  machine: StateMachine,
  scope: Scope,
  previous: EventRecord | undefined,
  actionType: string | null,
  state: string,
  nowMs: number,
  counts: boolean,
): EventRecord {
  const at = new Date(nowMs).toISOString();
  const timeout = machine.timeoutOf(state);
  return {
    fingerprint: scope.fingerprint,
    namespace: scope.namespace,
    tenant: scope.tenant,
    state_machine: machine.name,
    state,
    action_type: actionType ?? previous?.action_type ?? null,
    created_at: previous?.created_at ?? at,
    updated_at: at,
    transition_count: (previous?.transition_count ?? 0) + (counts ? 1 : 0),
    timeout_at: timeout ? new Date(nowMs + timeout.afterMs).toISOString() : null,
  };
}

function failed(actionId: string, code: FailureCode, message: string, retryable: boolean): DispatchOutcome {
  return { outcome: 'failed', action_id: actionId, error: { code, message, retryable, attempts: 0 } };
}
