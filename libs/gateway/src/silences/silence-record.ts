import type { Silence, StoredSilence } from '@sluice/core';

/** The window is [starts_at, ends_at): a silence whose ends_at is now no longer applies. */
function isActiveAt(window: { startsMs: number; endsMs: number }, nowMs: number): boolean {
  return window.startsMs <= nowMs && nowMs < window.endsMs;
}

export function windowOf(silence: StoredSilence): { startsMs: number; endsMs: number } {
  return { startsMs: Date.parse(silence.starts_at), endsMs: Date.parse(silence.ends_at) };
}

/** The response form: the stored record plus whether it applies right now. */
export function toSilence(stored: StoredSilence, nowMs: number): Silence {
  return { ...stored, active: isActiveAt(windowOf(stored), nowMs) };
}
