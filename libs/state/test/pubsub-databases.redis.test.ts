import { afterAll, describe, expect, it } from 'vitest';
import { testRedisUrl, uniquePrefix } from '../../../test/support/redis-url.js';
import { RedisStateStore } from '../src/redis/redis-state-store.js';

/** Pub/sub ignores Redis's database: stores on db 3 and db 4 with one prefix must not hear each other. */
describe('pub/sub across Redis databases', () => {
  const prefix = uniquePrefix();
  const stores: RedisStateStore[] = [];
  const storeOn = async (db: number) => {
    const store = await RedisStateStore.connect({ url: `${testRedisUrl()}/${db}`, prefix });
    stores.push(store);
    return store;
  };
  afterAll(() => Promise.all(stores.map((s) => s.close())));

  it('delivers a message to the stores of its own database only', async () => {
    const [publisher, sameDb, otherDb] = [await storeOn(3), await storeOn(3), await storeOn(4)];
    const heard: Record<string, string[]> = { same: [], other: [] };
    await sameDb.subscribe('events', (m) => heard.same?.push(m));
    await otherDb.subscribe('events', (m) => heard.other?.push(m));
    await publisher.publish('events', 'from db 3');
    await otherDb.publish('events', 'from db 4');
    await new Promise((r) => setTimeout(r, 200));
    expect(heard).toEqual({ same: ['from db 3'], other: ['from db 4'] });
  });
});
