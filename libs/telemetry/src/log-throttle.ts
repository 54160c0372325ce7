/**
 * Lets one log line per key through each window: a condition that fails on every request (a
 * broken rule, a provider that is down) logs once per window, the line saying how many it stands
 * for. `pass(key)` is the number held back since the key's last line, or null while held back.
 */
export function logThrottle(windowMs: number, now: () => number): (key: string) => number | null {
  const last = new Map<string, { at: number; held: number }>();
  return (key) => {
    const at = now();
    const seen = last.get(key);
    if (seen !== undefined && at - seen.at < windowMs) {
      seen.held++;
      return null;
    }
    // Kept in the order of their last line: when full, the key idle longest is forgotten, not the lot.
    last.delete(key);
    if (last.size >= MAX_KEYS) last.delete(last.keys().next().value as string);
    last.set(key, { at, held: 0 });
    return seen?.held ?? 0;
  };
}

const MAX_KEYS = 10_000;
