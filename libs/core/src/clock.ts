/** A pending timer of a Clock; cancelling twice, or after it fired, does nothing. */
export interface TimerHandle {
  cancel(): void;
}

/**
 * Time source. Everything that reasons about windows, TTLs and schedules, and everything that
 * waits (timers, polls, sweeps), takes a Clock, so tests move time instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `fn` once, `delayMs` from now by this clock. A timer never keeps the process alive. */
  setTimer(fn: () => void, delayMs: number): TimerHandle;
  /** Calls `fn` every `intervalMs` by this clock until cancelled. Never keeps the process alive. */
  setRepeating(fn: () => void, intervalMs: number): TimerHandle;
}

/** Node clamps setTimeout delays above 2^31-1 ms (~24.8 days) to 1 ms; longer waits re-arm in steps. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** The wall clock and Node's timers, unref'd. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, delayMs) {
    checkDelay(delayMs);
    const at = Date.now() + delayMs;
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      const wait = at - Date.now();
      timer = wait > MAX_TIMEOUT_MS ? setTimeout(arm, MAX_TIMEOUT_MS) : setTimeout(fn, Math.max(0, wait));
      timer.unref();
    };
    arm();
    return { cancel: () => clearTimeout(timer) };
  },
  // Periods above Node's limit (~24.8 days) run at that limit; ours are seconds to minutes.
  setRepeating(fn, intervalMs) {
    checkDelay(intervalMs);
    const timer = setInterval(fn, Math.min(Math.max(1, intervalMs), MAX_TIMEOUT_MS));
    timer.unref();
    return { cancel: () => clearInterval(timer) };
  },
};

/** Both clocks refuse a delay that is not a number of ms, rather than firing at once (Node) or at NaN (a manual clock). */
function checkDelay(ms: number): void {
  if (!Number.isFinite(ms)) throw new RangeError(`a timer delay must be a finite number of ms, got ${ms}`);
}

interface ManualTimer {
  at: number;
  seq: number;
  fn: () => void;
  /** Set for repeating timers. */
  everyMs: number | undefined;
  cancelled: boolean;
}

/**
 * A clock that only moves when told to, for tests of windows, expiry, timeouts and schedules.
 * Its timers fire during advance()/set(), in time order (ties in creation order), each with
 * now() reading its due time; a timer set by a callback fires in the same advance if it is due.
 * A repeating timer fires once per period passed in advanceAsync(), as if time had run
 * steadily; in a synchronous set()/advance() it fires once, at the last period passed, as
 * Node's setInterval does after the event loop was held up: a jump of days in a test would
 * otherwise call every 5-second poll ~17,000 times a day, back to back, for nothing.
 */
export class ManualClock implements Clock {
  private readonly timers: ManualTimer[] = [];
  private seq = 0;

  constructor(private current = Date.UTC(2026, 0, 1)) {}

  now(): number {
    return this.current;
  }

  setTimer(fn: () => void, delayMs: number): TimerHandle {
    return this.add(fn, delayMs, undefined);
  }

  setRepeating(fn: () => void, intervalMs: number): TimerHandle {
    return this.add(fn, intervalMs, Math.max(1, intervalMs));
  }

  /** Timers not yet fired nor cancelled. */
  get pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  advance(ms: number): void {
    this.set(this.current + ms);
  }

  /** Moves to `ms`, firing every timer due on the way. Moving back in time fires nothing. */
  set(ms: number): void {
    for (let due = this.nextDue(ms); due; due = this.nextDue(ms)) {
      const last = lastPeriod(due, ms);
      // Missed periods are skipped; the timer fires in its turn at the last one.
      if (last > due.at) due.at = last;
      else this.fire(due);
    }
    this.current = ms;
    this.prune();
  }

  /**
   * advance() for code whose timers start async work: after each timer fires (and once before
   * the first), lets the promise chains it started run to their end, so that what they do in
   * turn (record a result, set the next timer, e.g. a retry after a failed job) happens at that
   * timer's time and a timer they set fires in this same advance when due. Work waiting on
   * real I/O (sockets, files) is not waited for.
   */
  async advanceAsync(ms: number): Promise<void> {
    const until = this.current + ms;
    await settle();
    for (let due = this.nextDue(until); due; due = this.nextDue(until)) {
      this.fire(due);
      await settle();
    }
    // A timer's callback may have moved the clock on itself: never back.
    this.current = Math.max(this.current, until);
    this.prune();
  }

  private fire(due: ManualTimer): void {
    this.current = Math.max(this.current, due.at);
    if (due.everyMs === undefined) due.cancelled = true;
    else {
      due.at += due.everyMs;
      due.seq = this.seq++;
    }
    due.fn();
  }

  private add(fn: () => void, delayMs: number, everyMs: number | undefined): TimerHandle {
    checkDelay(delayMs);
    const timer: ManualTimer = { at: this.current + Math.max(0, delayMs), seq: this.seq++, fn, everyMs, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  private nextDue(until: number): ManualTimer | undefined {
    let best: ManualTimer | undefined;
    for (const t of this.timers) {
      if (t.cancelled || t.at > until) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }

  private prune(): void {
    for (let i = this.timers.length - 1; i >= 0; i--) if (this.timers[i]?.cancelled) this.timers.splice(i, 1);
  }
}

/** The last due time of a timer's periods that is not after `until` (its own due time for a one-off timer). */
function lastPeriod(timer: ManualTimer, until: number): number {
  return timer.everyMs === undefined ? timer.at : timer.at + Math.floor((until - timer.at) / timer.everyMs) * timer.everyMs;
}

/**
 * One turn of the event loop: every queued promise callback (and those they queue) runs before
 * a setImmediate callback does.
 */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

const MAX_DATE_MS = 8.64e15;

/** One formatted second: the ISO text up to and including its '.'. */
interface IsoSecond {
  second: number;
  prefix: string;
}
// Two seconds, least recently used first: an audit record formats now and now + its TTL in turn.
let older: IsoSecond = { second: Number.NaN, prefix: '' };
let newer: IsoSecond = { second: Number.NaN, prefix: '' };

/**
 * `new Date(ms).toISOString()`, formatting the date and time once per second: dispatches and
 * log lines format the current time many times a second, and toISOString is slow.
 */
export function isoString(ms: number): string {
  // Fractions (Date truncates them), NaN and times out of Date's range (toISOString throws) take Date's own path.
  if (!Number.isInteger(ms) || Math.abs(ms) > MAX_DATE_MS) return new Date(ms).toISOString();
  const second = Math.floor(ms / 1000);
  let hit = newer;
  if (hit.second !== second) {
    hit = older;
    if (hit.second !== second) {
      hit.second = second;
      hit.prefix = new Date(second * 1000).toISOString().slice(0, -4);
    }
    older = newer;
    newer = hit;
  }
  const fraction = ms - second * 1000;
  return `${hit.prefix}${fraction < 10 ? '00' : fraction < 100 ? '0' : ''}${fraction}Z`;
}
