import { ManualClock, QuotaCreateInput, SluiceError, type QuotaPolicy } from '@sluice/core';
import { MemoryStateStore } from '@sluice/state';
import { createLogger } from '@sluice/telemetry';
import { afterEach, describe, expect, it } from 'vitest';
import { consumeQuota } from './quota-counter.js';
import { QuotaRepository } from './quota-repository.js';

const logger = createLogger({ level: 'silent', role: 'test' });
const configured: QuotaPolicy = {
  id: 'cfg',
  namespace: 'ns',
  tenant: 'cfg-t',
  max_actions: 5,
  window: 'daily',
  overage_behavior: 'block',
  enabled: true,
  source: 'config',
};
const input = (over: Record<string, unknown> = {}) => QuotaCreateInput.parse({ namespace: 'ns', tenant: 't', max_actions: 3, window: 'hourly', ...over });

/** Expects a SluiceError with this status (and message pattern). */
async function rejects(p: Promise<unknown> | (() => unknown), status: number, message?: RegExp) {
  const err = await (typeof p === 'function' ? Promise.resolve().then(p) : p).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SluiceError);
  expect((err as SluiceError).statusCode).toBe(status);
  if (message) expect((err as SluiceError).message).toMatch(message);
}

describe('QuotaRepository', () => {
  const clock = new ManualClock(Date.UTC(2026, 2, 5, 14, 30));
  const repos: QuotaRepository[] = [];
  const start = async (state: MemoryStateStore) => {
    const repo = new QuotaRepository({ state, clock, logger, policies: [configured], syncIntervalMs: 60_000 });
    await repo.start();
    repos.push(repo);
    return repo;
  };
  afterEach(async () => {
    await Promise.all(repos.splice(0).map((r) => r.close()));
  });

  it('creates API policies with a generated id and timestamps, and lists them with config ones', async () => {
    const repo = await start(new MemoryStateStore({ clock }));
    const created = await repo.create(input({ description: 'three an hour' }));
    expect(created).toMatchObject({
      namespace: 'ns',
      tenant: 't',
      max_actions: 3,
      overage_behavior: 'block',
      enabled: true,
      source: 'api',
      description: 'three an hour',
    });
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.created_at).toBe('2026-03-05T14:30:00.000Z');
    expect(repo.get(created.id)).toEqual(created);
    expect(repo.list({ limit: 100, offset: 0 })).toEqual({ quotas: [configured, created], count: 2 });
    expect(repo.list({ tenant: 't', limit: 100, offset: 0 }).quotas).toEqual([created]);
    expect(repo.list({ limit: 1, offset: 1 })).toEqual({ quotas: [created], count: 2 });
    expect(repo.match('ns', 't')?.id).toBe(created.id);
  });

  it('refuses a second policy for an id or a (namespace, tenant) pair, config included', async () => {
    const repo = await start(new MemoryStateStore({ clock }));
    await repo.create(input({ id: 'one' }));
    await rejects(repo.create(input({ id: 'one', tenant: 'other' })), 409, /already exists: one/);
    await rejects(repo.create(input({ id: 'two' })), 409, /namespace ns, tenant t/);
    await rejects(repo.create(input({ id: 'cfg', tenant: 'x' })), 409);
    await rejects(repo.create(input({ id: 'three', tenant: 'cfg-t' })), 409);
    // The refused pair did not keep the id "two" reserved.
    expect(await repo.create(input({ id: 'two', tenant: 'u' }))).toMatchObject({ id: 'two' });
  });

  it('lets exactly one of many concurrent creates of one pair win', async () => {
    const state = new MemoryStateStore({ clock });
    const [a, b] = [await start(state), await start(state)];
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).create(input({ id: `c${i}` }))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it('updates part of a policy, keeping id and scope; null clears the description', async () => {
    const repo = await start(new MemoryStateStore({ clock }));
    await repo.create(input({ id: 'p', description: 'old' }));
    clock.advance(1000);
    const updated = await repo.update('p', { max_actions: 7, enabled: false });
    expect(updated).toMatchObject({ id: 'p', namespace: 'ns', tenant: 't', max_actions: 7, window: 'hourly', enabled: false, description: 'old' });
    expect(updated.updated_at).not.toBe(updated.created_at);
    expect(await repo.update('p', { description: null })).not.toHaveProperty('description');
    expect(repo.get('p').max_actions).toBe(7);
    await rejects(repo.update('nope', { max_actions: 1 }), 404, /quota policy not found: nope/);
  });

  it('deletes API policies (freeing the pair and the id) and refuses to touch config ones', async () => {
    const repo = await start(new MemoryStateStore({ clock }));
    await repo.create(input({ id: 'p' }));
    await repo.delete('p');
    await rejects(() => repo.get('p'), 404);
    await rejects(repo.delete('p'), 404);
    await rejects(repo.update('p', { max_actions: 1 }), 404);
    expect(await repo.create(input({ id: 'p' }))).toMatchObject({ id: 'p' });
    await rejects(repo.update('cfg', { max_actions: 1 }), 409, /configuration file/);
    await rejects(repo.delete('cfg'), 409);
  });

  it('shares edits with every replica on the same state', async () => {
    const state = new MemoryStateStore({ clock });
    const [a, b] = [await start(state), await start(state)];
    await a.create(input({ id: 'shared' }));
    await expect.poll(() => b.current.get('shared')?.max_actions).toBe(3);
    await a.update('shared', { max_actions: 9 });
    await expect.poll(() => b.current.get('shared')?.max_actions).toBe(9);
    await b.delete('shared');
    await expect.poll(() => a.current.get('shared')).toBeUndefined();
  });

  it('reports usage of the current window; * policies name the tenant', async () => {
    const state = new MemoryStateStore({ clock });
    const repo = await start(state);
    const p = await repo.create(input({ id: 'u' }));
    await consumeQuota(state, p, 'ns', 't', clock.now());
    expect(await repo.usage('u', {})).toEqual({
      id: 'u',
      namespace: 'ns',
      tenant: 't',
      used: 1,
      limit: 3,
      remaining: 2,
      window: 'hourly',
      resets_at: '2026-03-05T15:00:00.000Z',
      overage_behavior: 'block',
    });
    const wide = await repo.create(input({ id: 'w', tenant: '*' }));
    await consumeQuota(state, wide, 'ns', 'x', clock.now());
    expect(await repo.usage('w', { tenant: 'x' })).toMatchObject({ tenant: 'x', used: 1 });
    await rejects(repo.usage('w', {}), 400, /\?tenant=/);
    await rejects(repo.usage('u', { tenant: 'other' }), 400);
    await rejects(repo.usage('missing', {}), 404);
  });
});
