/**
 * The circuit breaker of one provider as pure transitions; the store applies them by
 * compare-and-swap so every replica moves the same breaker.
 *
 * closed → open after `failureThreshold` consecutive retryable failures (client errors do not
 * count, a success resets the count); open → half_open once `recoveryMs` has passed, admitting
 * one probe at a time (a probe holds its slot for `probeLeaseMs`, so a probe whose process died
 * frees it); half_open → closed after `successThreshold` probe successes; a probe failure
 * re-opens it.
 */

export type BreakerStatus = 'closed' | 'open' | 'half_open';

export interface BreakerState {
  state: BreakerStatus;
  /** Consecutive retryable failures (closed). */
  failures: number;
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

export const CLOSED: Readonly<BreakerState> = Object.freeze({ state: 'closed', failures: 0, successes: 0, opened_at: null, probe_until: null });

export function opened(nowMs: number): BreakerState {
  return { state: 'open', failures: 0, successes: 0, opened_at: nowMs, probe_until: null };
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

/** The state after a call's result; null when nothing changes (no write). Only a probe's result moves a half-open breaker. */
export function afterCall(s: BreakerState, policy: BreakerPolicy, result: CallResult, probe: boolean, nowMs: number): BreakerState | null {
  if (s.state === 'closed') {
    if (result === 'success') return s.failures > 0 ? { ...CLOSED } : null;
    if (result === 'neutral') return null;
    return s.failures + 1 >= policy.failureThreshold ? opened(nowMs) : { ...s, failures: s.failures + 1 };
  }
  if (s.state === 'open' || !probe) return null; // a call let through before it opened, or not the probe
  if (result === 'failure') return opened(nowMs);
  if (result === 'neutral') return { ...s, probe_until: null };
  return s.successes + 1 >= policy.successThreshold ? { ...CLOSED } : { ...s, successes: s.successes + 1, probe_until: null };
}

export function decodeBreaker(raw: string | null): BreakerState {
  if (raw === null) return { ...CLOSED };
  try {
    const v = JSON.parse(raw) as Partial<BreakerState>;
    if (v.state === 'closed' || v.state === 'open' || v.state === 'half_open') {
      return { state: v.state, failures: v.failures ?? 0, successes: v.successes ?? 0, opened_at: v.opened_at ?? null, probe_until: v.probe_until ?? null };
    }
  } catch {
    // fall through: an unreadable breaker is a closed one (it fails open, never blocks traffic on garbage)
  }
  return { ...CLOSED };
}
