import { ManualClock, SluiceError } from '@sluice/core';
import { MemoryStateStore } from '@sluice/state';
import { afterEach, describe, expect, it } from 'vitest';
import { LoginThrottle } from './login-throttle.js';

const refusal = (err: unknown) => (err instanceof SluiceError ? { code: err.code, retry_after: err.extra?.retry_after } : err);

describe('LoginThrottle', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  let state: MemoryStateStore;
  const throttle = (max_attempts = 3, window_seconds = 60) => {
    state = new MemoryStateStore({ clock });
    return new LoginThrottle(state, clock, { max_attempts, window_seconds });
  };
  afterEach(() => state.close());

  it('refuses a username after max_attempts without a success, until its window ends, without checking the password', async () => {
    const t = throttle();
    let checks = 0;
    const wrong = () => t.guard('alice', async () => ++checks && false);
    for (let i = 0; i < 3; i++) expect(await wrong()).toBe(false);
    await expect(wrong().catch(refusal)).resolves.toEqual({ code: 'RATE_LIMITED', retry_after: 60 });
    expect(checks).toBe(3);
    // Another username is counted on its own.
    expect(await t.guard('bob', async () => true)).toBe(true);
    clock.advance(45_000);
    await expect(wrong().catch(refusal)).resolves.toEqual({ code: 'RATE_LIMITED', retry_after: 15 });
    clock.advance(15_000);
    expect(await wrong()).toBe(false);
  });

  it('starts a username afresh after a success', async () => {
    const t = throttle();
    for (let i = 0; i < 2; i++) await t.guard('alice', async () => false);
    await t.guard('alice', async () => true);
    await t.succeeded('alice');
    for (let i = 0; i < 3; i++) expect(await t.guard('alice', async () => false)).toBe(false);
    await expect(t.guard('alice', async () => true).catch(refusal)).resolves.toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('runs two checks at a time, queues 32 more and refuses the rest at once', async () => {
    const t = throttle(1000);
    const releases: (() => void)[] = [];
    let running = 0;
    let most = 0;
    const slowCheck = () =>
      new Promise<boolean>((resolve) => {
        most = Math.max(most, ++running);
        releases.push(() => {
          running--;
          resolve(false);
        });
      });
    const admitted = Array.from({ length: 34 }, (_, i) => t.guard(`user${i}`, slowCheck));
    await expect(t.guard('one-too-many', slowCheck).catch(refusal)).resolves.toEqual({ code: 'RATE_LIMITED', retry_after: 1 });
    let settled = 0;
    for (const p of admitted) void p.then(() => settled++);
    while (settled < admitted.length) {
      await new Promise((r) => setImmediate(r));
      releases.shift()?.();
    }
    expect(await Promise.all(admitted)).toEqual(Array(34).fill(false));
    expect(most).toBe(2);
  });
});
