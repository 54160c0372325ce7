import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { renderKey } from '@sluice/state';
import { poll } from '../../../test/support/poll.js';
import { connectRedisStore, dropAndClose } from '../../../test/support/redis-topologies.js';
import { testRedisUrl, uniquePrefix } from '../../../test/support/redis-url.js';
import { ingestLogKey } from '../src/keys.js';
import { StateAuditStore } from '../src/state-audit-store.js';
import { draft } from './support/records.js';

/** The ingest's consumer group (log-ingest.ts: a durable name). */
const GROUP = 'indexer';

/*
 * A process killed before its close() leaves its consumers in the ingest group (every restart
 * two names): the indexer loops forget those idle past forgetIdleAfterMs that hold nothing.
 */
describe('the audit ingest on Redis: consumers of killed processes', () => {
  const admin = new Redis(testRedisUrl());
  afterAll(() => admin.quit());

  it('are forgotten by an indexer loop once idle, while every record is still indexed', async () => {
    const prefix = uniquePrefix();
    const state = await connectRedisStore('redis', prefix);
    const audit = new StateAuditStore(state, { ingest: { forgetIdleAfterMs: 300 } });
    const names = async () => ((await admin.xinfo('CONSUMERS', renderKey(prefix, ingestLogKey()), GROUP)) as string[][]).map((c) => c[1]);
    try {
      await audit.append(draft({ action_id: 'first' }), { ttlMs: null, chain: false });
      // A process that read the message, indexed it and was killed before it could forget itself.
      await state.logGroupCreate(ingestLogKey(), GROUP, 'start');
      const [message] = await state.logGroupRead(ingestLogKey(), GROUP, 'killed-1234-loop', 10);
      expect((await state.logGroupAckWith(ingestLogKey(), GROUP, 'killed-1234-loop', [message?.id ?? ''], [])).applied).toBe(true);
      expect(await names()).toEqual(['killed-1234-loop']);

      audit.startIndexer();
      await audit.append(draft({ action_id: 'second' }), { ttlMs: null, chain: false });
      await poll('the killed process’s consumer forgotten', names, (n) => !n.includes('killed-1234-loop'), { timeoutMs: 10_000, intervalMs: 50 });
      // The live loop indexes on (its consumer is created again by its next read if it was idle).
      await audit.append(draft({ action_id: 'third' }), { ttlMs: null, chain: false });
      await poll(
        'the records appended after it indexed',
        () => audit.query({ limit: 10, offset: 0, namespace: 'ns' }),
        (page) => page.records.some((r) => r.action_id === 'third') && page.records.some((r) => r.action_id === 'second'),
        { timeoutMs: 10_000, intervalMs: 50 },
      );
    } finally {
      await audit.close();
      await dropAndClose(state, prefix);
    }
  });
});
