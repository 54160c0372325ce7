import { deleteKeys } from '../../../../test/support/delete-keys.js';
import { uniquePrefix } from '../../../../test/support/redis-url.js';
import type { RedisStateStore } from '../../src/redis/redis-state-store.js';
import type { ContractHarness, ContractOptions } from '../contract/harness.js';

/** Real sleeps: TTLs of 150-600 ms; resetAtMs comes from server time on this host. */
export const REDIS_CONTRACT_OPTIONS: ContractOptions = { unitMs: 150, toleranceMs: 60 };

/**
 * The contract's harness on a real Redis of any deployment: a fresh prefix per test, real time,
 * and the prefix's keys dropped after it through a connection of its own (some tests close the
 * store they were given).
 */
export function redisContract(connect: (prefix: string) => Promise<RedisStateStore>): () => Promise<ContractHarness> {
  return async () => {
    const prefix = uniquePrefix();
    const store = await connect(prefix);
    return {
      store,
      advance: (ms) => new Promise<void>((r) => setTimeout(r, ms)),
      now: () => Date.now(),
      cleanup: async () => {
        await store.close();
        const admin = await connect(prefix);
        try {
          await deleteKeys(admin.client, `${prefix}:*`);
        } finally {
          await admin.close();
        }
      },
    };
  };
}
