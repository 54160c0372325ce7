import type { Clock } from '@sluice/core';
import { MemoryStateStore, RedisStateStore, type StateStore } from '@sluice/state';
import { afterAll } from 'vitest';
import { deletePrefix } from './delete-keys.js';
import { testRedisUrl, uniquePrefix } from './redis-url.js';

/** Both StateStore backends: a suite that must hold on each runs once per entry (describe.each). */
export const STATE_BACKENDS = ['memory', 'redis'] as const;
export type StateBackend = (typeof STATE_BACKENDS)[number];

/**
 * Opens stores for one test file and closes them (dropping the Redis keys) after it. On Redis,
 * `replicas` connections share one prefix, as replicas share one Redis; on memory they are the
 * one store. The memory store runs on `clock` (Redis keeps its own time).
 */
export function stateStores(): { open(backend: StateBackend, opts?: { clock?: Clock; replicas?: number }): Promise<StateStore[]> } {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    await Promise.all(cleanups.splice(0).map((c) => c()));
  });
  return {
    async open(backend, opts = {}) {
      const replicas = opts.replicas ?? 1;
      if (backend === 'memory') {
        const store = new MemoryStateStore(opts.clock ? { clock: opts.clock } : {});
        cleanups.push(() => store.close());
        return Array.from({ length: replicas }, () => store);
      }
      const prefix = uniquePrefix();
      const stores = await Promise.all(Array.from({ length: replicas }, () => RedisStateStore.connect({ url: testRedisUrl(), prefix })));
      cleanups.push(async () => {
        await Promise.all(stores.map((s) => s.close()));
        await deletePrefix(prefix);
      });
      return stores;
    },
  };
}
