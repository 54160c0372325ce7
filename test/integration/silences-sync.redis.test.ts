import { systemClock, type SilenceCreateInput } from '@sluice/core';
import { SilenceService } from '@sluice/gateway';
import { RedisStateStore, type StateStore, type Unsubscribe } from '@sluice/state';
import { createLogger } from '@sluice/telemetry';
import { afterAll, describe, expect, it } from 'vitest';
import { deletePrefix } from '../support/delete-keys.js';
import { poll } from '../support/poll.js';
import { testRedisUrl, uniquePrefix } from '../support/redis-url.js';

const logger = createLogger({ level: 'silent', role: 'test' });
const PROD = { env: 'prod' };

const input = (tenant: string): SilenceCreateInput => ({
  namespace: 'payments',
  tenant,
  matchers: [{ name: 'env', op: 'equal', value: 'prod' }],
  comment: 'sync test',
  duration_seconds: 3600,
});

/** A view of `state` that never subscribes: the replica's pub/sub is cut, everything else works. */
function withoutSubscriptions(state: StateStore): { store: StateStore; subscribeCalls: string[] } {
  const subscribeCalls: string[] = [];
  const store = new Proxy(state, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (prop === 'subscribe') {
        return async (channel: string): Promise<Unsubscribe> => {
          subscribeCalls.push(channel);
          return async () => {};
        };
      }
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store, subscribeCalls };
}

describe('silence sync between replicas (Redis): pub/sub first, the generation poll as the backstop', () => {
  const stores: StateStore[] = [];
  const services: SilenceService[] = [];
  const prefixes: string[] = [];
  afterAll(async () => {
    await Promise.all(services.map((s) => s.close()));
    await Promise.all(stores.map((s) => s.close()));
    await Promise.all(prefixes.map((p) => deletePrefix(p)));
  });

  /** Connections sharing one fresh prefix, as replicas share one Redis. */
  async function connect(n: number): Promise<StateStore[]> {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const opened = await Promise.all(Array.from({ length: n }, () => RedisStateStore.connect({ url: testRedisUrl(), prefix })));
    stores.push(...opened);
    return opened;
  }

  async function replica(state: StateStore, syncIntervalMs: number): Promise<SilenceService> {
    const service = new SilenceService({ state, clock: systemClock, logger, syncIntervalMs });
    services.push(service);
    await service.start();
    return service;
  }

  it('a replica whose subscription is cut misses the broadcast and applies the silence on its next poll (1.5 s)', async () => {
    const [stateA, stateB, stateWitness] = await connect(3);
    if (!stateA || !stateB || !stateWitness) throw new Error('no stores');
    const a = await replica(stateA, 60_000);
    // An uncut replica that does not poll either: it sees the silence only if the broadcast went out.
    const witness = await replica(stateWitness, 60_000);
    const cut = withoutSubscriptions(stateB);
    // B's first poll is 1.5 s after its timer is armed (inside start()), so everything up to the
    // witness's reload below happens before it.
    const bStarting = Date.now();
    const b = await replica(cut.store, 1500);
    expect(cut.subscribeCalls).toEqual(['silence']);

    const created = await a.create(input('t-cut'), 'ops');
    const createdAt = Date.now();
    expect(a.current.match('payments', 't-cut', PROD, Date.now())?.id).toBe(created.id);
    expect(b.current.match('payments', 't-cut', PROD, Date.now())).toBeUndefined();
    // The broadcast was sent and heard: the witness has the silence...
    await poll(
      'the uncut witness to apply the silence',
      () => witness.current.match('payments', 't-cut', PROD, Date.now())?.id,
      (id) => id === created.id,
      {
        timeoutMs: 1000,
        intervalMs: 5,
      },
    );
    // ...and B, told nothing, still does not.
    const witnessedAt = Date.now();
    expect(witnessedAt - bStarting).toBeLessThan(1500);
    expect(b.current.match('payments', 't-cut', PROD, Date.now())).toBeUndefined();

    // The backstop: B's generation poll finds the new generation and reloads.
    await poll(
      'replica B to apply the silence on its poll',
      () => b.current.match('payments', 't-cut', PROD, Date.now())?.id,
      (id) => id === created.id,
      {
        timeoutMs: 2500,
        intervalMs: 10,
      },
    );
    const appliedAt = Date.now();
    // Within one timer interval of the creation (plus a margin for the reload itself)...
    expect(appliedAt - createdAt).toBeLessThanOrEqual(1500 + 500);
    // ...and not before the first tick: nothing but the poll could have told B.
    expect(appliedAt - bStarting).toBeGreaterThanOrEqual(1500 - 20);
    expect(await b.get(created.id)).toMatchObject({ id: created.id, active: true });
  });

  it('control: an uncut replica that polls only every 60 s applies a silence from the broadcast within 1 s', async () => {
    const [stateA, stateB] = await connect(2);
    if (!stateA || !stateB) throw new Error('no stores');
    const a = await replica(stateA, 60_000);
    const b = await replica(stateB, 60_000);
    const created = await a.create(input('t-uncut'), 'ops');
    await poll(
      'replica B to apply the silence from the broadcast',
      () => b.current.match('payments', 't-uncut', PROD, Date.now())?.id,
      (id) => id === created.id,
      {
        timeoutMs: 1000,
        intervalMs: 5,
      },
    );
    expect(await b.get(created.id)).toMatchObject({ id: created.id, active: true });
    expect(b.current.match('payments', 't-uncut', { env: 'dev' }, Date.now())).toBeUndefined();
  });
});
