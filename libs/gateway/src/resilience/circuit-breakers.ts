import { errors, type Clock } from '@sluice/core';
import { GLOBAL_SCOPE, type StateKey, type StateStore } from '@sluice/state';
import {
  admit,
  afterFailures,
  afterProbe,
  afterSuccess,
  closedAfter,
  decodeBreaker,
  opened,
  reportedStatus,
  type BreakerPolicy,
  type BreakerState,
  type BreakerStatus,
  type CallResult,
} from './breaker-state.js';

/** The key kinds of breaker states and of their failure counts: never rename without a migration. */
const BREAKER_KIND = 'circuit-breaker';
const FAILURES_KIND = 'circuit-breaker-failures';
/** How long an epoch's failure count lives: failures further apart than this may not add up. */
const FAILURE_COUNT_MS = 24 * 3_600_000;
/** Compare-and-swap rounds on one breaker; a call that loses them all is rejected (admit) or its state change dropped (record). */
const CAS_ROUNDS = 8;
/** The gauge's value per state (the Grafana panel maps them back). */
const GAUGE_VALUE: Record<BreakerStatus, number> = { closed: 0, open: 1, half_open: 2 };

export interface ProviderBreaker {
  policy: BreakerPolicy;
  fallback: string | null;
}

export interface BreakerView {
  provider: string;
  state: BreakerStatus;
  failure_threshold: number;
  success_threshold: number;
  recovery_timeout_seconds: number;
  fallback_provider: string | null;
}

/** A call the breakers let through: to `provider` (the one asked for, or a fallback), as the half-open probe or not. */
export interface Admitted {
  provider: string;
  probe: boolean;
  /** The epoch of the closed breaker that let it pass: where its failure counts. */
  epoch: number;
}

export interface CircuitBreakersDeps {
  state: StateStore;
  clock: Clock;
  /** Every configured provider's breaker, by provider name. */
  breakers: ReadonlyMap<string, ProviderBreaker>;
  /** Told of each state this process reads or writes (the sluice_circuit_breaker_state gauge). */
  onState(provider: string, value: number): void;
  /** Told when a call's result could not be counted (logged). */
  onRecordFailed?(provider: string, err: unknown): void;
  /** Told when this process's write opened a closed breaker (or tripped one) or closed one, and why: logged, the one trace a trip or a close leaves. */
  onTransition?(provider: string, to: 'open' | 'closed', cause: BreakerCause): void;
}

/** What moved a breaker: its failures, its probe's result, or an admin's trip or reset. */
export type BreakerCause = 'failures' | 'probe' | 'trip' | 'reset';

/**
 * The providers' circuit breakers, kept in the state store so every replica sees one state: a
 * failure counted on any replica counts, a trip on one is seen by the next call on any other.
 * Every change of state is a compare-and-swap of the provider's breaker; a closed breaker's
 * failures are one atomic increment each, so concurrent failures on many replicas all count.
 * Calling through a closed breaker costs one read, and one more to count the result.
 */
export class CircuitBreakers {
  constructor(private readonly deps: CircuitBreakersDeps) {}

  /**
   * Where a call to `provider` goes: the provider itself while its breaker admits it, else its
   * `fallback_provider` (followed in turn, a cycle ending the search); null when every breaker
   * on the way is open.
   */
  async admit(provider: string): Promise<Admitted | null> {
    const seen = new Set<string>();
    for (let name: string | null = provider; name !== null && !seen.has(name); ) {
      seen.add(name);
      const breaker = this.deps.breakers.get(name);
      if (!breaker) return { provider: name, probe: false, epoch: 0 };
      const verdict = await this.admitOne(name, breaker.policy);
      if (verdict !== 'reject') return { provider: name, ...verdict };
      name = breaker.fallback;
    }
    return null;
  }

  /**
   * Counts a call's result on the breaker that admitted it; false when it could not (the store
   * failed, or a state change kept losing the race to other writers). The call has happened by
   * then: bookkeeping never fails it (a failed dispatch would be retried, and the provider called twice).
   */
  async record(admitted: Admitted, result: CallResult): Promise<boolean> {
    const breaker = this.deps.breakers.get(admitted.provider);
    if (!breaker) return true;
    const { provider, epoch } = admitted;
    try {
      if (admitted.probe) await this.change(provider, (s) => afterProbe(s, breaker.policy, result, this.deps.clock.now()), 'probe');
      else if (result === 'failure') {
        const { count } = await this.deps.state.incrementWindow(failuresKey(provider, epoch), { windowMs: FAILURE_COUNT_MS });
        if (count >= breaker.policy.failureThreshold)
          await this.change(provider, (s) => afterFailures(s, breaker.policy, epoch, count, this.deps.clock.now()), 'failures');
      } else if (result === 'success') {
        const { count } = await this.deps.state.readWindow(failuresKey(provider, epoch));
        if (count > 0) await this.change(provider, (s) => afterSuccess(s, epoch), 'failures');
      }
      return true;
    } catch (err) {
      this.deps.onRecordFailed?.(provider, err);
      return false;
    }
  }

  async list(): Promise<BreakerView[]> {
    const names = [...this.deps.breakers.keys()];
    const stored = await Promise.all(names.map((name) => this.deps.state.getVersioned(keyOf(name))));
    return names.map((name, i) => this.view(name, decodeBreaker(stored[i]?.value ?? null)));
  }

  /** Forces it open (calls rejected, or sent to the fallback) until a reset or the recovery timeout's probe. */
  async trip(provider: string): Promise<BreakerView & { message: string }> {
    this.known(provider);
    const now = this.deps.clock.now();
    return { ...this.view(provider, await this.change(provider, (s) => opened(s, now), 'trip')), message: 'circuit breaker tripped' };
  }

  async reset(provider: string): Promise<BreakerView & { message: string }> {
    this.known(provider);
    return { ...this.view(provider, await this.change(provider, closedAfter, 'reset')), message: 'circuit breaker reset' };
  }

  private known(provider: string): void {
    if (!this.deps.breakers.has(provider)) throw errors.notFound('circuit breaker', provider);
  }

  private async admitOne(provider: string, policy: BreakerPolicy): Promise<{ probe: boolean; epoch: number } | 'reject'> {
    const key = keyOf(provider);
    for (let round = 0; round < CAS_ROUNDS; round++) {
      const current = await this.deps.state.getVersioned(key);
      const state = decodeBreaker(current?.value ?? null);
      const now = this.deps.clock.now();
      this.deps.onState(provider, GAUGE_VALUE[reportedStatus(state, policy, now)]);
      const admission = admit(state, policy, now);
      if (admission.verdict === 'reject') return 'reject';
      if (admission.verdict === 'pass') return { probe: false, epoch: state.epoch };
      // Half-open admits one call at a time: the probe slot is taken by compare-and-swap.
      if ((await this.deps.state.compareAndSwap(key, current?.version ?? 0, JSON.stringify(admission.next))).ok) {
        this.deps.onState(provider, GAUGE_VALUE.half_open);
        return { probe: true, epoch: state.epoch };
      }
    }
    return 'reject';
  }

  /** Applies `next` by compare-and-swap (null from it: no write); returns the state it left. */
  private async change(provider: string, next: (s: BreakerState) => BreakerState | null, cause: BreakerCause): Promise<BreakerState> {
    const key = keyOf(provider);
    for (let round = 0; round < CAS_ROUNDS; round++) {
      const current = await this.deps.state.getVersioned(key);
      const state = decodeBreaker(current?.value ?? null);
      const changed = next(state);
      if (changed === null) return state;
      if ((await this.deps.state.compareAndSwap(key, current?.version ?? 0, JSON.stringify(changed))).ok) {
        this.deps.onState(provider, GAUGE_VALUE[this.reported(provider, changed)]);
        // Opened from closed (a failed probe re-opening it would say so every recovery timeout), or closed.
        const opened = changed.state === 'open' && (state.state === 'closed' || cause === 'trip');
        if (opened) this.deps.onTransition?.(provider, 'open', cause);
        else if (changed.state === 'closed' && state.state !== 'closed') this.deps.onTransition?.(provider, 'closed', cause);
        return changed;
      }
    }
    throw errors.conflict(`circuit breaker ${provider} kept changing; try again`);
  }

  private reported(provider: string, state: BreakerState): BreakerStatus {
    const { policy } = this.deps.breakers.get(provider) as ProviderBreaker;
    return reportedStatus(state, policy, this.deps.clock.now());
  }

  private view(provider: string, state: BreakerState): BreakerView {
    const { policy, fallback } = this.deps.breakers.get(provider) as ProviderBreaker;
    const status = this.reported(provider, state);
    this.deps.onState(provider, GAUGE_VALUE[status]);
    return {
      provider,
      state: status,
      failure_threshold: policy.failureThreshold,
      success_threshold: policy.successThreshold,
      recovery_timeout_seconds: policy.recoveryMs / 1000,
      fallback_provider: fallback,
    };
  }
}

function keyOf(provider: string): StateKey {
  return { kind: BREAKER_KIND, ...GLOBAL_SCOPE, id: provider };
}

function failuresKey(provider: string, epoch: number): StateKey {
  return { kind: FAILURES_KIND, ...GLOBAL_SCOPE, id: `${provider}:${epoch}` };
}
