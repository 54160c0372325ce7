import { ManualClock, type Action, type FailureInfo } from '@sluice/core';
import { createLogger } from '@sluice/telemetry';
import { describe, expect, it } from 'vitest';
import { STATE_BACKENDS, stateStores } from '../../../../test/support/state-backends.js';
import { DeadLetterQueue } from './dead-letter-queue.js';

const logger = createLogger({ level: 'silent', role: 'test' });
const error: FailureInfo = { code: 'TIMEOUT', message: 'slow', retryable: true, attempts: 4 };
const everything = () => true;

function action(id: string, tenant = 't'): Action {
  return { id, namespace: 'ns', tenant, provider: 'p', action_type: 'a', payload: {}, metadata: {}, created_at: '2026-01-01T00:00:00.000Z' };
}

describe.each(STATE_BACKENDS)('dead-letter queue (%s)', (backend) => {
  const stores = stateStores();

  async function queues(n: number, maxPerTenant = 1000, counters: { onQueued?: () => void; onDropped?: () => void } = {}): Promise<DeadLetterQueue[]> {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const states = await stores.open(backend, { clock, replicas: n });
    return states.map((state) => new DeadLetterQueue({ state, clock, logger, maxPerTenant, ...counters }));
  }

  it('hands each entry to exactly one of two replicas draining at once', async () => {
    const [a, b] = await queues(2);
    if (!a || !b) throw new Error('no replicas');
    for (let i = 0; i < 20; i++) await (i % 2 ? a : b).push(action(`x-${i}`), 'p', error);
    const [fromA, fromB] = await Promise.all([a.drain({}, 20, everything), b.drain({}, 20, everything)]);
    const ids = [...fromA.entries, ...fromB.entries].map((e) => e.action_id).sort();
    expect(ids).toEqual(Array.from({ length: 20 }, (_, i) => `x-${i}`).sort());
    await Promise.all([fromA.commit(), fromB.commit()]);
    expect((await a.list({}, { limit: 100, offset: 0 }, everything)).count).toBe(0);
  });

  it('removes drained entries only once their answer is written: released, or never settled, they come back', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const [state] = await stores.open(backend, { clock });
    if (!state) throw new Error('no store');
    const q = new DeadLetterQueue({ state, clock, logger, maxPerTenant: 100 });
    for (const id of ['a', 'b', 'c']) await q.push(action(id), 'p', error);
    const first = await q.drain({}, 2, everything);
    expect(first.entries.map((e) => e.action_id)).toEqual(['a', 'b']);
    // Taken: gone to readers and to another drain, which gets only what is left.
    expect((await q.list({}, { limit: 10, offset: 0 }, everything)).count).toBe(1);
    const rest = await q.drain({}, 10, everything);
    expect(rest.entries.map((e) => e.action_id)).toEqual(['c']);
    await rest.release();
    await first.release();
    const second = await q.drain({}, 10, everything);
    expect(second.entries.map((e) => e.action_id)).toEqual(['a', 'b', 'c']);
    // The process "dies" before settling: once the lease ends, the entries can be drained again.
    clock.advance(60_001);
    const third = await q.drain({}, 10, everything);
    expect(third.entries.map((e) => e.action_id)).toEqual(['a', 'b', 'c']);
    await third.commit();
    expect((await q.list({}, { limit: 10, offset: 0 }, everything)).count).toBe(0);
  });

  it('never drains an entry a retry on another replica has leased, nor retries one drained', async () => {
    const [a, b] = await queues(2);
    if (!a || !b) throw new Error('no replicas');
    for (let i = 0; i < 30; i++) await a.push(action(`x-${i}`), 'p', error);
    const ids = (await a.list({}, { limit: 100, offset: 0 }, everything)).entries.map((e) => e.id);
    const redispatched: string[] = [];
    const redispatch = async (retried: Action) => {
      redispatched.push(String(retried.metadata?.labels?.['dlq_retry_of']));
      return { outcome: 'executed' as const, action_id: retried.id, response: { status: 'success' as const, body: {}, headers: {} } };
    };
    const [drained, ...retries] = await Promise.all([
      a.drain({}, 100, everything),
      ...ids.map((id) =>
        b.retry(id, redispatch).then(
          () => 'retried',
          (err: { statusCode?: number }) => err.statusCode,
        ),
      ),
    ]);
    const taken = drained as Awaited<ReturnType<DeadLetterQueue['drain']>>;
    await taken.commit();
    const drainedIds = taken.entries.map((e) => e.action_id);
    // Each entry went one way: drained or re-dispatched, never both, and none was lost.
    expect(drainedIds.filter((id) => redispatched.includes(id))).toEqual([]);
    expect([...drainedIds, ...redispatched].sort()).toEqual(Array.from({ length: 30 }, (_, i) => `x-${i}`).sort());
    // A retry that lost to the drain is a 404 (the entry is gone), not a 409.
    expect(retries.filter((r) => r !== 'retried').every((r) => r === 404)).toBe(true);
  });

  it('queues an action once however often it is pushed (a chain step run again), per tenant', async () => {
    let queued = 0;
    let dropped = 0;
    const [a, b] = await queues(2, 1000, { onQueued: () => queued++, onDropped: () => dropped++ });
    if (!a || !b) throw new Error('no replicas');
    await Promise.all([a.push(action('run:0:1'), 'p', error), b.push(action('run:0:1'), 'p', error)]);
    await a.push(action('run:0:1'), 'p', error);
    await a.push(action('run:0:1', 'other'), 'p', error);
    expect((await a.list({}, { limit: 10, offset: 0 }, everything)).entries.map((e) => [e.tenant, e.action_id])).toEqual([
      ['t', 'run:0:1'],
      ['other', 'run:0:1'],
    ]);
    expect({ queued, dropped }).toEqual({ queued: 2, dropped: 0 });
  });

  it('keeps at most maxPerTenant entries per tenant, counting what it queues and what it drops apart', async () => {
    let dropped = 0;
    let queued = 0;
    const [q] = await queues(1, 2, { onQueued: () => queued++, onDropped: () => dropped++ });
    if (!q) throw new Error('no queue');
    for (const id of ['a', 'b', 'c']) await q.push(action(id), 'p', error);
    await q.push(action('d', 'other'), 'p', error);
    expect({ queued, dropped }).toEqual({ queued: 3, dropped: 1 });
    expect((await q.stats(everything)).by_tenant).toEqual({ t: 2, other: 1 });
  });
});
