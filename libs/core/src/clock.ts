/** Time source. Everything that reasons about windows, TTLs and schedules takes a Clock so tests need not sleep. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to; for tests of windows and expiry. */
export class ManualClock implements Clock {
  constructor(private current = Date.UTC(2026, 0, 1)) {}

  now(): number {
    return this.current;
  }

  advance(ms: number): void {
    this.current += ms;
  }

  set(ms: number): void {
    this.current = ms;
  }
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
