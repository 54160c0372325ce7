import type { QuotaWindowName } from '@sluice/core';

export interface WindowBounds {
  /** Epoch ms of the window's first instant (inclusive). */
  startMs: number;
  /** Epoch ms at which the next window starts (exclusive). */
  endMs: number;
}

const HOUR_MS = 3_600_000;

/**
 * The calendar window (UTC) containing `nowMs`. Windows are epoch-aligned rather than anchored
 * at a tenant's first action, so every replica derives the same window (and counter key) from
 * the time alone, and `resets_at` is a boundary a person can predict. Weeks are ISO weeks
 * (Monday 00:00 UTC); months are calendar months. Date.UTC normalises day/month overflow.
 */
export function windowBounds(window: QuotaWindowName, nowMs: number): WindowBounds {
  const d = new Date(nowMs);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const day = d.getUTCDate();
  switch (window) {
    case 'hourly': {
      const startMs = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
      return { startMs, endMs: startMs + HOUR_MS };
    }
    case 'daily':
      return { startMs: Date.UTC(y, m, day), endMs: Date.UTC(y, m, day + 1) };
    case 'weekly': {
      const sinceMonday = (d.getUTCDay() + 6) % 7;
      return { startMs: Date.UTC(y, m, day - sinceMonday), endMs: Date.UTC(y, m, day - sinceMonday + 7) };
    }
    case 'monthly':
      return { startMs: Date.UTC(y, m, 1), endMs: Date.UTC(y, m + 1, 1) };
  }
}
