import { ManualClock } from '@sluice/core';
import { GLOBAL_SCOPE, MemoryStateStore, RedisStateStore, renderKey, type StateStore } from '@sluice/state';
import { afterAll, describe, expect, it } from 'vitest';
import { testRedisUrl, uniquePrefix } from '../../../test/support/redis-url.js';
import { RevocationList } from './revocation-list.js';

describe('RevocationList on the memory store', () => {
  it('revokes until the token would have expired (plus leeway), then forgets', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const state = new MemoryStateStore({ clock });
    const list = new RevocationList(state, clock);
    expect(await list.isRevoked('j1')).toBe(false);
    await list.revoke('j1', clock.now() + 60_000);
    expect(await list.isRevoked('j1')).toBe(true);
    expect(await list.isRevoked('j2')).toBe(false);
    clock.advance(64_000);
    expect(await list.isRevoked('j1')).toBe(true);
    clock.advance(2_000);
    expect(await list.isRevoked('j1')).toBe(false);
    await state.close();
  });

  it('keeps an entry at least a second even for an already expired token', async () => {
    const clock = new ManualClock();
    const state = new MemoryStateStore({ clock });
    const list = new RevocationList(state, clock);
    await list.revoke('old', clock.now() - 3_600_000);
    expect(await list.isRevoked('old')).toBe(true);
    await state.close();
  });

  it('uses a global jwt-revoked key', async () => {
    const state = new MemoryStateStore();
    await new RevocationList(state).revoke('j9', Date.now() + 10_000);
    expect(await state.get({ kind: 'jwt-revoked', namespace: '_', tenant: '_', id: 'j9' })).toBe('1');
    await state.close();
  });
});

describe('RevocationList on Redis (cluster-wide)', () => {
  const stores: StateStore[] = [];
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
  });

  it('a revocation written by one replica is seen by another', async () => {
    const prefix = uniquePrefix();
    const a = await RedisStateStore.connect({ url: testRedisUrl(), prefix });
    const b = await RedisStateStore.connect({ url: testRedisUrl(), prefix });
    stores.push(a, b);
    const replicaA = new RevocationList(a);
    const replicaB = new RevocationList(b);
    // An already-expired token: the entry lives the 1 s minimum plus the verification leeway.
    await replicaA.revoke('jti-1', Date.now() - 10_000);
    expect(await replicaB.isRevoked('jti-1')).toBe(true);
    expect(await replicaB.isRevoked('jti-2')).toBe(false);
    const ttl = await a.client.pttl(renderKey(prefix, { kind: 'jwt-revoked', ...GLOBAL_SCOPE, id: 'jti-1' }));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(6_000);
  });
});
