import { describe, expect, it } from 'vitest';
import { CLOSED, admit, afterCall, decodeBreaker, opened, type BreakerState } from './breaker-state.js';

const policy = { failureThreshold: 3, successThreshold: 2, recoveryMs: 1000, probeLeaseMs: 500 };

describe('breaker transitions', () => {
  it('closed counts consecutive failures; a success resets them; neutral results change nothing', () => {
    let s: BreakerState = { ...CLOSED };
    s = afterCall(s, policy, 'failure', false, 0) ?? s;
    s = afterCall(s, policy, 'failure', false, 0) ?? s;
    expect(s.failures).toBe(2);
    expect(afterCall(s, policy, 'neutral', false, 0)).toBeNull();
    expect(afterCall(s, policy, 'success', false, 0)).toEqual(CLOSED);
    expect(afterCall({ ...CLOSED }, policy, 'success', false, 0)).toBeNull(); // nothing to reset: no write
    expect(afterCall(s, policy, 'failure', false, 42)).toEqual(opened(42));
  });

  it('open rejects until the recovery timeout, then admits one probe at a time', () => {
    const open = opened(0);
    expect(admit(open, policy, 999).verdict).toBe('reject');
    const first = admit(open, policy, 1000);
    expect(first).toEqual({ verdict: 'probe', next: { ...open, state: 'half_open', probe_until: 1500 } });
    const half = (first as { next: BreakerState }).next;
    expect(admit(half, policy, 1200).verdict).toBe('reject'); // the probe holds its slot
    expect(admit(half, policy, 1500).verdict).toBe('probe'); // its lease ran out (its process died)
  });

  it('half-open: probe successes close it, a probe failure re-opens it, other calls do not count', () => {
    const half: BreakerState = { state: 'half_open', failures: 0, successes: 0, opened_at: 0, probe_until: 1500 };
    const once = afterCall(half, policy, 'success', true, 1100) as BreakerState;
    expect(once).toMatchObject({ state: 'half_open', successes: 1, probe_until: null });
    expect(afterCall(once, policy, 'success', true, 1200)).toEqual(CLOSED);
    expect(afterCall(half, policy, 'failure', true, 1300)).toEqual(opened(1300));
    expect(afterCall(half, policy, 'failure', false, 1300)).toBeNull();
    expect(afterCall(opened(5), policy, 'failure', false, 10)).toBeNull();
  });

  it('an unreadable stored state reads as closed', () => {
    expect(decodeBreaker('{nope')).toEqual(CLOSED);
    expect(decodeBreaker(null)).toEqual(CLOSED);
    expect(decodeBreaker(JSON.stringify(opened(7)))).toEqual(opened(7));
  });
});
