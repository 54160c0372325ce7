import { MemoryStateStore, type StateKey, type StateStore } from '@sluice/state';
import { describe, expect, it } from 'vitest';
import { listMembers } from '../src/analytics/index-listing.js';

const KEY: StateKey = { kind: 'test-ix', namespace: '_', tenant: '_', id: 'x' };

function counting(store: StateStore): { store: StateStore; offsets: number[] } {
  const offsets: number[] = [];
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'indexRange') {
        return async (...args: Parameters<StateStore['indexRange']>) => {
          offsets.push(args[1].offset ?? 0);
          return target.indexRange(...args);
        };
      }
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  return { store: proxy, offsets };
}

describe('listMembers', () => {
  it('lists every member once whatever the page size, across runs of equal scores', async () => {
    const store = new MemoryStateStore();
    // Distinct scores, a run of 7 ties, a run longer than a page, and ties at the very end.
    const scores = [1, 2, 3, ...Array<number>(7).fill(4), 5, ...Array<number>(11).fill(6), 7, 8, 8];
    const members = scores.map((score, i) => ({ member: `m${String(i).padStart(2, '0')}`, score }));
    for (const { member, score } of members) await store.indexAdd(KEY, member, score);
    for (const page of [1, 2, 3, 5, 7, 100]) {
      const listed = await listMembers(store, KEY, page);
      expect(listed.sort(), `page ${page}`).toEqual(members.map((m) => m.member).sort());
    }
    expect(await listMembers(store, { ...KEY, id: 'empty' }, 3)).toEqual([]);
    await store.close();
  });

  it('pages by score, not by offset, when scores are distinct', async () => {
    const memory = new MemoryStateStore();
    for (let i = 0; i < 20; i++) await memory.indexAdd(KEY, `m${i}`, i * 10);
    const spy = counting(memory);
    expect(await listMembers(spy.store, KEY, 6)).toHaveLength(20);
    // Each page after the first skips only the entry it starts on.
    expect(spy.offsets).toEqual([0, 1, 1, 1]);
    await memory.close();
  });
});
