import { ManualClock } from '@sluice/core';
import { RateLimitConfig } from '@sluice/config';
import { MemoryStateStore, type StateStore } from '@sluice/state';
import { describe, expect, it } from 'vitest';
import { RateLimiter } from './rate-limiter.js';

const config = RateLimitConfig.parse({
  enabled: true,
  per_tenant: { requests_per_window: 2, window_seconds: 1 },
  tenant_overrides: { full: { requests_per_window: 1, window_seconds: 60 } },
});

describe('per-tenant rate limits: a refused batch gives its charges back', () => {
  it('gives back what the tenants before the refusing one were charged', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const state = new MemoryStateStore({ clock });
    const limiter = new RateLimiter({ config, state, clock });
    await expect(limiter.checkTenants(['quiet', 'full', 'full'])).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    await limiter.checkTenants(['quiet', 'quiet']); // its whole limit is left
  });

  /** A store whose check of the refusing tenant first lets `meanwhile` happen (the first tenant's window ends, and more). */
  function slowOnFull(memory: MemoryStateStore, meanwhile: () => Promise<void>): StateStore {
    return new Proxy(memory, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (prop !== 'incrementWindow') return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return async (...args: Parameters<StateStore['incrementWindow']>) => {
          if (args[0].tenant === 'full') await meanwhile();
          return target.incrementWindow(...args);
        };
      },
    });
  }
  const quietWindow = { kind: 'rate-tenant', namespace: '_', tenant: 'quiet', id: 'requests' };

  it('does not give back into a window that ended meanwhile (no window opened below zero)', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const memory = new MemoryStateStore({ clock });
    const state = slowOnFull(memory, async () => clock.advance(1500));
    const limiter = new RateLimiter({ config, state, clock });
    await expect(limiter.checkTenants(['quiet', 'full', 'full'])).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect(await memory.readWindow(quietWindow)).toEqual({ count: 0, resetAtMs: null });
    // Exactly its limit in the next window, not one more.
    await limiter.checkTenants(['quiet', 'quiet']);
    await expect(limiter.checkTenants(['quiet'])).rejects.toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('does not give back into the window another request opened after the charged one ended', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const memory = new MemoryStateStore({ clock });
    const limiter = new RateLimiter({ config, state: memory, clock });
    const racing = new RateLimiter({
      config,
      clock,
      state: slowOnFull(memory, async () => {
        clock.advance(1500);
        await limiter.checkTenants(['quiet', 'quiet']); // the next window, filled
      }),
    });
    await expect(racing.checkTenants(['quiet', 'full', 'full'])).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect((await memory.readWindow(quietWindow)).count).toBe(2);
    await expect(limiter.checkTenants(['quiet'])).rejects.toMatchObject({ code: 'RATE_LIMITED' });
  });
});
