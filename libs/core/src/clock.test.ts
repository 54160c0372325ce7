import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock, isoString, systemClock } from './clock.js';

describe('isoString', () => {
  it('is toISOString, whatever the order of the times', () => {
    const base = Date.UTC(2026, 10, 23, 19, 59, 59, 998);
    const times = [
      base,
      base,
      base + 1,
      base + 2,
      base + 3,
      base - 1000,
      base + 1,
      0,
      -1,
      -999,
      -1000,
      -1001,
      1,
      9,
      10,
      99,
      100,
      999,
      1000,
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(10000, 0, 1),
      Date.UTC(-1, 0, 1, 0, 0, 0, 5),
      -8.64e15,
      8.64e15,
      8.64e15 - 1,
      1.5,
      -1.5,
      1767225600000.9,
      -0,
    ];
    for (let i = 0; i < 20_000; i++) times.push(base + Math.floor((Math.random() - 0.5) * 5_000), Math.floor((Math.random() - 0.5) * 2 * 8.64e15));
    for (const t of times) expect(isoString(t)).toBe(new Date(t).toISOString());
  });

  it('is toISOString when two seconds alternate (a record formats now and now + TTL)', () => {
    const now = Date.UTC(2026, 10, 25, 12, 0, 0, 0);
    const ttl = 30 * 86_400_000;
    for (let i = 0; i < 3000; i += 7) {
      for (const t of [now + i, now + i + ttl, now + i + 1, now + ttl + 2 * i]) expect(isoString(t)).toBe(new Date(t).toISOString());
    }
  });

  it('throws where toISOString does', () => {
    for (const t of [NaN, Infinity, -Infinity, 8.64e15 + 1, 8.64e15 + 500, -8.64e15 - 1]) {
      expect(() => new Date(t).toISOString()).toThrow(RangeError);
      expect(() => isoString(t)).toThrow(RangeError);
    }
  });
});

describe('ManualClock timers', () => {
  it('fires a timer at its due time, not a millisecond before, with now() reading that time', () => {
    const clock = new ManualClock(1000);
    const seen: number[] = [];
    clock.setTimer(() => seen.push(clock.now()), 300);
    clock.advance(299);
    expect(seen).toEqual([]);
    clock.advance(50);
    expect(seen).toEqual([1300]);
    expect(clock.now()).toBe(1349);
    clock.advance(10_000);
    expect(seen).toEqual([1300]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('fires in time order, ties in creation order, and fires a timer set by a callback when it is due', () => {
    const clock = new ManualClock(0);
    const seen: string[] = [];
    clock.setTimer(() => seen.push('b@20'), 20);
    clock.setTimer(() => seen.push('a@10'), 10);
    clock.setTimer(() => seen.push('c@20'), 20);
    clock.setTimer(() => {
      seen.push('d@5');
      clock.setTimer(() => seen.push(`e@${clock.now()}`), 10);
      clock.setTimer(() => seen.push('late'), 100);
    }, 5);
    clock.set(30);
    expect(seen).toEqual(['d@5', 'a@10', 'e@15', 'b@20', 'c@20']);
    expect(clock.pendingTimers).toBe(1);
  });

  it('cancels: a cancelled timer never fires; cancelling twice or after firing does nothing', () => {
    const clock = new ManualClock(0);
    const seen: string[] = [];
    const a = clock.setTimer(() => seen.push('a'), 10);
    const b = clock.setTimer(() => seen.push('b'), 10);
    a.cancel();
    a.cancel();
    expect(clock.pendingTimers).toBe(1);
    clock.advance(10);
    b.cancel();
    clock.advance(100);
    expect(seen).toEqual(['b']);
  });

  it('repeats once per jump, at the last period passed, until cancelled', () => {
    const clock = new ManualClock(0);
    const seen: string[] = [];
    const every = clock.setRepeating(() => seen.push(`every ${clock.now()}`), 100);
    clock.setTimer(() => seen.push(`once ${clock.now()}`), 250);
    clock.advance(99);
    expect(seen).toEqual([]);
    clock.advance(1);
    expect(seen).toEqual(['every 100']);
    // Periods 200 and 300 pass in one jump: one call, at 300, after the timer due before it.
    clock.advance(251);
    expect(seen).toEqual(['every 100', 'once 250', 'every 300']);
    clock.advance(100);
    expect(seen).toEqual(['every 100', 'once 250', 'every 300', 'every 400']);
    every.cancel();
    clock.advance(1000);
    expect(seen).toHaveLength(4);
  });

  it('repeats once per period passed in advanceAsync, as if time had run steadily', async () => {
    const clock = new ManualClock(0);
    const seen: number[] = [];
    clock.setRepeating(() => seen.push(clock.now()), 100);
    await clock.advanceAsync(350);
    expect(seen).toEqual([100, 200, 300]);
  });

  it('fires nothing when set back in time; timers stay due at their own time', () => {
    const clock = new ManualClock(1000);
    const seen: number[] = [];
    clock.setTimer(() => seen.push(clock.now()), 100);
    clock.set(500);
    expect(seen).toEqual([]);
    clock.set(1099);
    expect(seen).toEqual([]);
    clock.set(1100);
    expect(seen).toEqual([1100]);
  });

  it("advanceAsync runs the async work a timer starts at that timer's time, and timers it sets when due", async () => {
    const clock = new ManualClock(0);
    const attempts: number[] = [];
    // Like a retrying job: each attempt awaits, fails, and sets the retry timer in a continuation.
    const attempt = async (n: number): Promise<void> => {
      await Promise.resolve();
      await Promise.resolve();
      attempts.push(clock.now());
      if (n < 3) clock.setTimer(() => void attempt(n + 1), 50 * n);
    };
    clock.setTimer(() => void attempt(1), 0);
    await clock.advanceAsync(0);
    expect(attempts).toEqual([0]);
    await clock.advanceAsync(49);
    expect(attempts).toEqual([0]);
    await clock.advanceAsync(1_000);
    expect(attempts).toEqual([0, 50, 150]);
    expect(clock.now()).toBe(1049);
    // The synchronous advance fires the timer but leaves its continuation for later.
    const sync = new ManualClock(0);
    const done: number[] = [];
    sync.setTimer(() => void Promise.resolve().then(() => sync.setTimer(() => done.push(sync.now()), 10)), 0);
    sync.advance(100);
    expect(done).toEqual([]);
  });
});

describe('systemClock timers', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires a timer once, and not after cancel', async () => {
    const seen: string[] = [];
    const cancelled = systemClock.setTimer(() => seen.push('cancelled'), 1);
    cancelled.cancel();
    // Node fires due timers in order: once the later one has run, the cancelled one would have too.
    await new Promise<void>((resolve) => systemClock.setTimer(() => resolve(void seen.push('fired')), 5));
    expect(seen).toEqual(['fired']);
  });

  it("waits past Node's 2^31-1 ms timer limit by re-arming, and repeats until cancelled", () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'], now: 0 });
    const day = 86_400_000;
    const seen: number[] = [];
    systemClock.setTimer(() => seen.push(Date.now()), 30 * day);
    vi.advanceTimersByTime(30 * day - 1);
    expect(seen).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(seen).toEqual([30 * day]);
    const every = systemClock.setRepeating(() => seen.push(Date.now() - 30 * day), 100);
    vi.advanceTimersByTime(250);
    every.cancel();
    vi.advanceTimersByTime(1000);
    expect(seen).toEqual([30 * day, 100, 200]);
  });
});
