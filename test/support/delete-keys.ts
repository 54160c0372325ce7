import { Cluster, Redis } from 'ioredis';
import { testRedisUrl } from './redis-url.js';

/**
 * Deletes every key matching `pattern` (SCAN, not KEYS, so a big test server does not stall). On
 * a Redis Cluster every primary is scanned and keys are deleted one per command (no CROSSSLOT).
 */
export async function deleteKeys(redis: Redis | Cluster, pattern: string): Promise<void> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      if (keys.length > 0 && redis instanceof Cluster) await Promise.all(keys.map((key) => node.del(key)));
      else if (keys.length > 0) await node.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  }
}

/** Drops a test's keys from the shared test server (tests isolate by key prefix). */
export async function deletePrefix(prefix: string): Promise<void> {
  const admin = new Redis(testRedisUrl(), { maxRetriesPerRequest: 2 });
  try {
    await deleteKeys(admin, `${prefix}:*`);
  } finally {
    await admin.quit();
  }
}
