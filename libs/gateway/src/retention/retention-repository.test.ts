import { ManualClock, RetentionCreateInput, SluiceError } from '@sluice/core';
import { MemoryStateStore } from '@sluice/state';
import { createLogger } from '@sluice/telemetry';
import { afterEach, describe, expect, it } from 'vitest';
import { RetentionRepository } from './retention-repository.js';

const logger = createLogger({ level: 'silent', role: 'test' });
const input = (over: Record<string, unknown> = {}) => RetentionCreateInput.parse({ namespace: 'ns', tenant: 't', ...over });

async function rejects(p: Promise<unknown> | (() => unknown), status: number, message?: RegExp) {
  const err = await (typeof p === 'function' ? Promise.resolve().then(p) : p).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SluiceError);
  expect((err as SluiceError).statusCode).toBe(status);
  if (message) expect((err as SluiceError).message).toMatch(message);
}

describe('RetentionRepository', () => {
  const clock = new ManualClock(Date.UTC(2026, 2, 5, 14, 30));
  const repos: RetentionRepository[] = [];
  const start = async (state: MemoryStateStore) => {
    const repo = new RetentionRepository({ state, clock, logger, syncIntervalMs: 60_000 });
    await repo.start();
    repos.push(repo);
    return repo;
  };
  afterEach(async () => {
    await Promise.all(repos.splice(0).map((r) => r.close()));
  });

  it('creates an enabled policy with a server id and timestamps, omitting unset fields', async () => {
    const repo = await start(new MemoryStateStore({ clock }));
    const created = await repo.create(input({ audit_ttl_seconds: 86_400, description: 'one day', labels: { team: 'pay' }, state_ttl_seconds: null }));
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      namespace: 'ns',
      tenant: 't',
      enabled: true,
      audit_ttl_seconds: 86_400,
      compliance_hold: false,
      created_at: '2026-03-05T14:30:00.000Z',
      updated_at: '2026-03-05T14:30:00.000Z',
      description: 'one day',
      labels: { team: 'pay' },
    });
    expect(repo.get(created.id)).toEqual(created);
    expect(repo.forScope('ns', 't')).toEqual(created);
    expect(repo.forScope('ns', 't.child')).toBeUndefined();
    expect(repo.forScope('other', 't')).toBeUndefined();
    expect(await repo.create(input({ tenant: 'u', labels: {} }))).not.toHaveProperty('labels');
  });

  it('refuses a second policy for a pair (409) and wildcards (400)', async () => {
    const repo = await start(new MemoryStateStore({ clock }));
    await repo.create(input());
    await rejects(repo.create(input({ compliance_hold: true })), 409, /namespace=ns tenant=t/);
    await rejects(repo.create(input({ tenant: '*' })), 400, /exact/);
    await rejects(repo.create(input({ namespace: '*' })), 400);
  });

  it('lets exactly one of many concurrent creates of one pair win, across replicas', async () => {
    const state = new MemoryStateStore({ clock });
    const [a, b] = [await start(state), await start(state)];
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).create(input())));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').every((r) => (r.reason as SluiceError).statusCode === 409)).toBe(true);
  });

  it('lists by namespace, tenant, id with filters, paging and a visibility filter', async () => {
    const repo = await start(new MemoryStateStore({ clock }));
    const [b, a, c] = [
      await repo.create(input({ tenant: 'b' })),
      await repo.create(input({ tenant: 'a' })),
      await repo.create(input({ namespace: 'z', tenant: 'a' })),
    ];
    expect(repo.list({ limit: 100, offset: 0 })).toEqual({ policies: [a, b, c], count: 3 });
    expect(repo.list({ namespace: 'ns', limit: 100, offset: 0 }).policies).toEqual([a, b]);
    expect(repo.list({ tenant: 'a', limit: 100, offset: 0 }).policies).toEqual([a, c]);
    expect(repo.list({ limit: 1, offset: 1 })).toEqual({ policies: [b], count: 3 });
    expect(repo.list({ limit: 100, offset: 0, visible: (p) => p.tenant === 'b' })).toEqual({ policies: [b], count: 1 });
  });

  it('updates part of a policy; null clears an optional field; the pair and id stay', async () => {
    const repo = await start(new MemoryStateStore({ clock }));
    const p = await repo.create(input({ audit_ttl_seconds: 60, event_ttl_seconds: 5, description: 'old', labels: { a: '1' } }));
    clock.advance(1000);
    const held = await repo.update(p.id, { compliance_hold: true, enabled: false, state_ttl_seconds: 10 });
    expect(held).toEqual({ ...p, compliance_hold: true, enabled: false, state_ttl_seconds: 10, updated_at: '2026-03-05T14:30:01.000Z' });
    const cleared = await repo.update(p.id, { audit_ttl_seconds: null, description: null, labels: null });
    expect(cleared).not.toHaveProperty('audit_ttl_seconds');
    expect(cleared).not.toHaveProperty('description');
    expect(cleared).not.toHaveProperty('labels');
    expect(cleared).toMatchObject({ id: p.id, namespace: 'ns', tenant: 't', event_ttl_seconds: 5, state_ttl_seconds: 10, compliance_hold: true });
    expect(repo.forScope('ns', 't')).toEqual(cleared);
    await rejects(repo.update('nope', { enabled: true }), 404, /^retention policy not found: nope$/);
  });

  it('deletes a policy, freeing its pair', async () => {
    const repo = await start(new MemoryStateStore({ clock }));
    const p = await repo.create(input());
    await repo.delete(p.id);
    await rejects(() => repo.get(p.id), 404, /retention policy not found/);
    await rejects(repo.delete(p.id), 404);
    expect(repo.forScope('ns', 't')).toBeUndefined();
    expect(await repo.create(input())).toMatchObject({ namespace: 'ns', tenant: 't' });
  });

  it('shares edits with every replica on the same state', async () => {
    const state = new MemoryStateStore({ clock });
    const [a, b] = [await start(state), await start(state)];
    const p = await a.create(input());
    await expect.poll(() => b.forScope('ns', 't')?.id).toBe(p.id);
    await a.update(p.id, { compliance_hold: true });
    await expect.poll(() => b.forScope('ns', 't')?.compliance_hold).toBe(true);
    await b.delete(p.id);
    await expect.poll(() => a.current.get(p.id)).toBeUndefined();
  });

  it('a slow reload finishing after a newer one does not bring back old data', async () => {
    const state = new MemoryStateStore({ clock });
    let release: (() => void) | null = null;
    let holdNextScan = false;
    // The first listing read after arming reads, then waits for `release`: an older reload overtaken by a newer one.
    const slow = new Proxy(state, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (prop === 'indexRange' && holdNextScan) {
          holdNextScan = false;
          return async (...args: Parameters<MemoryStateStore['indexRange']>) => {
            const page = await target.indexRange(...args);
            await new Promise<void>((r) => (release = r));
            return page;
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const repo = new RetentionRepository({ state: slow, clock, logger });
    const writer = new RetentionRepository({ state, clock, logger });
    holdNextScan = true;
    const older = repo.reload(); // reads the empty store, then is held
    await expect.poll(() => release).not.toBeNull();
    await writer.create(input());
    await repo.reload();
    expect(repo.forScope('ns', 't')).toBeDefined();
    (release as (() => void) | null)?.();
    await older;
    expect(repo.forScope('ns', 't')).toBeDefined();
  });

  it('reload() picks up a change that no broadcast announced', async () => {
    const state = new MemoryStateStore({ clock });
    const writer = await start(state);
    const reader = new RetentionRepository({ state, clock, logger });
    await writer.create(input());
    expect(reader.forScope('ns', 't')).toBeUndefined(); // never started: no sync
    await reader.reload();
    expect(reader.forScope('ns', 't')).toBeDefined();
  });
});
