/**
 * The circuit breaker of one provider as pure transitions; the store applies them by
 * compare-and-swap so every replica moves the same breaker.
 *
 * closed → open after `failureThreshold` consecutive retryable failures (client errors do not
 * count, a success resets the count); open → half_open once `recoveryMs` has passed, admitting
 * one probe at a time (a probe holds its slot for `probeLeaseMs`, so a probe whose process died
 * frees it); half_open → closed after `successThreshold` probe successes; a probe failure
 * re-opens it.
 *
 * A closed breaker's failures are not kept here: each replica adds them to a shared counter of
 * the breaker's `epoch` (one atomic increment, never lost to a concurrent writer), and a success
 * after failures, or closing it again, starts the next epoch, whose count starts at zero.
 */

export type BreakerStatus = 'closed' | 'open' | 'half_open';

export interface BreakerState {
  state: BreakerStatus;
  /** The closed period failures are counted in; grows when a success resets the count and when it closes again. */
  epoch: number;
  /** Probe successes so far (half_open). */
  successes: number;
  /** When it last opened (epoch ms); the recovery timeout counts from here. */
  opened_at: number | null;
  /** While a probe is out: until when its slot is held (epoch ms). */
  probe_until: number | null;
}

export interface BreakerPolicy {
  failureThreshold: number;
  successThreshold: number;
  recoveryMs: number;
  probeLeaseMs: number;
}

/** What a provider call gave, as the breaker sees it. */
export type CallResult = 'success' | 'failure' | 'neutral';

export const CLOSED: Readonly<BreakerState> = Object.freeze({ state: 'closed', epoch: 0, successes: 0, opened_at: null, probe_until: null });

export function opened(s: BreakerState, nowMs: number): BreakerState {
  return { state: 'open', epoch: s.epoch, successes: 0, opened_at: nowMs, probe_until: null };
}

/** Closed again (a reset, or the probes' successes): a new epoch, so no failure counted before carries over. */
export function closedAfter(s: BreakerState): BreakerState {
  return { ...CLOSED, epoch: s.epoch + 1 };
}

/** Whether a call may go: `pass` (closed), `probe` (the one half-open call; `next` claims its slot) or `reject`. */
export type Admission = { verdict: 'pass' } | { verdict: 'probe'; next: BreakerState } | { verdict: 'reject' };

export function admit(s: BreakerState, policy: BreakerPolicy, nowMs: number): Admission {
  if (s.state === 'closed') return { verdict: 'pass' };
  if (s.state === 'open' && nowMs < (s.opened_at ?? 0) + policy.recoveryMs) return { verdict: 'reject' };
  if (s.state === 'half_open' && s.probe_until !== null && nowMs < s.probe_until) return { verdict: 'reject' };
  const successes = s.state === 'half_open' ? s.successes : 0;
  return { verdict: 'probe', next: { ...s, state: 'half_open', successes, probe_until: nowMs + policy.probeLeaseMs } };
}

/**
 * The state to report: an open breaker whose recovery timeout has passed is half-open — its next
 * call is the probe — though the stored state changes only when a call comes. Reported open, an
 * idle provider that had recovered stayed open in the gauge and the views for good.
 */
export function reportedStatus(s: BreakerState, policy: BreakerPolicy, nowMs: number): BreakerStatus {
  return s.state === 'open' && nowMs >= (s.opened_at ?? 0) + policy.recoveryMs ? 'half_open' : s.state;
}

/** `failures` counted in `epoch`: open when they reach the threshold and the breaker is still in that epoch (null: no write). */
export function afterFailures(s: BreakerState, policy: BreakerPolicy, epoch: number, failures: number, nowMs: number): BreakerState | null {
  return s.state === 'closed' && s.epoch === epoch && failures >= policy.failureThreshold ? opened(s, nowMs) : null;
}

/** A success after failures counted in `epoch`: the count starts again (null when the breaker has moved on). */
export function afterSuccess(s: BreakerState, epoch: number): BreakerState | null {
  return s.state === 'closed' && s.epoch === epoch ? { ...s, epoch: epoch + 1 } : null;
}

/** The half-open probe's result; null when the breaker was tripped or reset meanwhile (no write). */
export function afterProbe(s: BreakerState, policy: BreakerPolicy, result: CallResult, nowMs: number): BreakerState | null {
  if (s.state !== 'half_open') return null;
  if (result === 'failure') return opened(s, nowMs);
  if (result === 'neutral') return { ...s, probe_until: null };
  return s.successes + 1 >= policy.successThreshold ? closedAfter(s) : { ...s, successes: s.successes + 1, probe_until: null };
}

export function decodeBreaker(raw: string | null): BreakerState {
  if (raw === null) return { ...CLOSED };
  try {
    const v = JSON.parse(raw) as Partial<BreakerState>;
    if (v.state === 'closed' || v.state === 'open' || v.state === 'half_open') {
      return { state: v.state, epoch: v.epoch ?? 0, successes: v.successes ?? 0, opened_at: v.opened_at ?? null, probe_until: v.probe_until ?? null };
    }
  } catch {
    // fall through: an unreadable breaker is a closed one (it fails open, never blocks traffic on garbage)
  }
  return { ...CLOSED };
}
