import type { RedisStateStore as RedisStateStoreClass, RedisStateStoreOptions } from './redis/redis-state-store.js';

/** The Redis store's instance type; the class itself is exported by `@sluice/state/redis`. */
export type RedisStateStore = RedisStateStoreClass;

/**
 * `RedisStateStore.connect()` from the main entry, which loads ioredis only when called; the main
 * entry stays light for the memory backend. Use `@sluice/state/redis` for the class itself.
 */
export const RedisStateStore = {
  async connect(opts: RedisStateStoreOptions): Promise<RedisStateStore> {
    const { RedisStateStore: Store } = await import('./redis/redis-state-store.js');
    return Store.connect(opts);
  },
};
