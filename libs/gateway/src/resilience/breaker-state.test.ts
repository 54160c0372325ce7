import { describe, expect, it } from 'vitest';
import { CLOSED, admit, afterFailures, afterProbe, afterSuccess, closedAfter, decodeBreaker, opened, type BreakerState } from './breaker-state.js';

const policy = { failureThreshold: 3, successThreshold: 2, recoveryMs: 1000, probeLeaseMs: 500 };

describe('breaker transitions', () => {
  it('closed opens when its epoch counts the threshold of failures; a success after failures starts the next epoch', () => {
    const s: BreakerState = { ...CLOSED, epoch: 4 };
    expect(afterFailures(s, policy, 4, 2, 0)).toBeNull();
    expect(afterFailures(s, policy, 4, 3, 42)).toEqual({ ...opened(s, 42), epoch: 4 });
    expect(afterFailures(s, policy, 3, 9, 42)).toBeNull(); // counted before a reset: they no longer add up
    expect(afterFailures(opened(s, 1), policy, 4, 3, 42)).toBeNull(); // another replica opened it first
    expect(afterSuccess(s, 4)).toEqual({ ...s, epoch: 5 });
    expect(afterSuccess(s, 3)).toBeNull(); // another success reset it first: no second write
  });

  it('open rejects until the recovery timeout, then admits one probe at a time', () => {
    const open = opened(CLOSED, 0);
    expect(admit(open, policy, 999).verdict).toBe('reject');
    const first = admit(open, policy, 1000);
    expect(first).toEqual({ verdict: 'probe', next: { ...open, state: 'half_open', probe_until: 1500 } });
    const half = (first as { next: BreakerState }).next;
    expect(admit(half, policy, 1200).verdict).toBe('reject'); // the probe holds its slot
    expect(admit(half, policy, 1500).verdict).toBe('probe'); // its lease ran out (its process died)
  });

  it('half-open: probe successes close it in a new epoch, a probe failure re-opens it, neutral frees the slot', () => {
    const half: BreakerState = { state: 'half_open', epoch: 2, successes: 0, opened_at: 0, probe_until: 1500 };
    const once = afterProbe(half, policy, 'success', 1100) as BreakerState;
    expect(once).toMatchObject({ state: 'half_open', successes: 1, probe_until: null });
    expect(afterProbe(once, policy, 'success', 1200)).toEqual({ ...CLOSED, epoch: 3 });
    expect(afterProbe(half, policy, 'failure', 1300)).toEqual(opened(half, 1300));
    expect(afterProbe(half, policy, 'neutral', 1300)).toEqual({ ...half, probe_until: null });
    expect(afterProbe(opened(half, 5), policy, 'failure', 10)).toBeNull(); // tripped meanwhile
    expect(closedAfter(opened(half, 5))).toEqual({ ...CLOSED, epoch: 3 });
  });

  it('an unreadable stored state reads as closed; one stored before epochs reads as epoch 0', () => {
    expect(decodeBreaker('{nope')).toEqual(CLOSED);
    expect(decodeBreaker(null)).toEqual(CLOSED);
    expect(decodeBreaker(JSON.stringify(opened(CLOSED, 7)))).toEqual(opened(CLOSED, 7));
    expect(decodeBreaker('{"state":"closed","failures":3,"successes":0,"opened_at":null,"probe_until":null}')).toEqual(CLOSED);
  });
});
