/** The playground's `context`: the evaluation clock, the names of environment variables, the zone. */
export interface PlaygroundContext {
  time: {
    hour: number;
    minute: number;
    second: number;
    day: number;
    month: number;
    year: number;
    weekday: string;
    weekday_num: number;
    timestamp: number;
  };
  environment_keys: string[];
  timezone: string;
}

const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const SENSITIVE_PARTS = ['SECRET', 'PASSWORD', 'TOKEN', 'CREDENTIAL', 'PRIVATE_KEY'];

/** Names that may hint at secrets are left out (the values are never listed at all). */
export function isListableEnvKey(name: string): boolean {
  const upper = name.toUpperCase();
  return !upper.endsWith('_KEY') && !SENSITIVE_PARTS.some((part) => upper.includes(part));
}

/**
 * Calendar fields of `now` (epoch ms) in `timezone` (an IANA name, via Intl). An unknown zone falls
 * back to UTC, and the returned `timezone` says which zone was used.
 */
export function playgroundContext(now: number, env: NodeJS.ProcessEnv, timezone = 'UTC'): PlaygroundContext {
  const formatter = formatterFor(timezone) ?? formatterFor('UTC')!;
  const parts: Record<string, string> = {};
  for (const part of formatter.format.formatToParts(now)) parts[part.type] = part.value;
  const weekdayNum = WEEKDAYS.indexOf(parts['weekday'] ?? '') + 1;
  return {
    time: {
      hour: Number(parts['hour']),
      minute: Number(parts['minute']),
      second: Number(parts['second']),
      day: Number(parts['day']),
      month: Number(parts['month']),
      year: Number(parts['year']),
      weekday: parts['weekday'] ?? '',
      weekday_num: weekdayNum,
      timestamp: Math.floor(now / 1000),
    },
    environment_keys: Object.keys(env).filter(isListableEnvKey).sort(),
    timezone: formatter.zone,
  };
}

const formatters = new Map<string, { format: Intl.DateTimeFormat; zone: string }>();

function formatterFor(timezone: string): { format: Intl.DateTimeFormat; zone: string } | null {
  const cached = formatters.get(timezone);
  if (cached) return cached;
  try {
    const format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'long',
    });
    const entry = { format, zone: timezone };
    formatters.set(timezone, entry);
    return entry;
  } catch {
    return null; // RangeError: not a time zone Intl knows
  }
}
