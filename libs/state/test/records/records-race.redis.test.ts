import { systemClock } from '@sluice/core';
import { afterAll, describe, expect, it } from 'vitest';
import { deletePrefix } from '../../../../test/support/delete-keys.js';
import { testRedisUrl, uniquePrefix } from '../../../../test/support/redis-url.js';
import { RecordRepository } from '../../src/records/record-repository.js';
import { RedisStateStore } from '../../src/redis/redis-state-store.js';
import { RECORDS_RACE } from '../fixtures/records-race-config.js';
import { spawnFixture, stopChild, type Child } from '../support/child-process.js';

interface Won {
  worker: string;
  ids: string[];
  unique: number;
  bounded: number;
  updates: number;
}

const children: Child[] = [];
afterAll(async () => {
  await Promise.all(children.map((c) => stopChild(c)));
});

describe('RecordRepository races across processes (Redis)', () => {
  it('settles creates, unique names, a scope maximum and updates in Redis when two processes race', async () => {
    const prefix = uniquePrefix();
    const started = ['A', 'B'].map((w) => spawnFixture('records-race-child.ts', [testRedisUrl(), prefix, w], {}));
    children.push(...started);
    await Promise.all(started.map((c) => c.waitFor((m) => m.ready === true)));
    for (const c of started) c.proc.stdin?.end('go\n');
    const results = (await Promise.all(started.map((c) => c.waitFor((m) => typeof m.worker === 'string', 30_000)))) as unknown as Won[];

    const sum = (f: (w: Won) => number) => results.reduce((n, w) => n + f(w), 0);
    const ids = results.flatMap((w) => w.ids).sort();
    expect(ids).toEqual(Array.from({ length: RECORDS_RACE.ids }, (_, i) => `id-${i}`).sort());
    expect(sum((w) => w.unique)).toBe(1);
    expect(sum((w) => w.bounded)).toBe(RECORDS_RACE.maxPerScope);
    expect(sum((w) => w.updates)).toBe(2 * RECORDS_RACE.updates);

    const store = await RedisStateStore.connect({ url: testRedisUrl(), prefix });
    try {
      const decode = (raw: unknown) => raw as { id: string; namespace: string; tenant: string; owner: string; count: number };
      const byId = new RecordRepository({ state: store, clock: systemClock, kind: 'race-ids', label: 'item', decode, globalIds: true });
      const all = (await byId.listAll()).records;
      expect(all).toHaveLength(RECORDS_RACE.ids);
      // Each record is the winner's: its owner is the process that saw "created".
      for (const { record } of all) expect(results.find((w) => w.ids.includes(record.id))?.worker).toBe(record.owner);
      expect((await byId.find('id-0'))?.record.count).toBe(2 * RECORDS_RACE.updates);
    } finally {
      await store.close();
      await deletePrefix(prefix);
    }
  });
});
