import { Redis } from 'ioredis';
import { testRedisUrl } from './redis-url.js';

/** Deletes every key matching `pattern` (SCAN, not KEYS, so a big test server does not stall). */
export async function deleteKeys(redis: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
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
