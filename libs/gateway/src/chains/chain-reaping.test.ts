import { ManualClock, type ChainDefinition } from '@sluice/core';
import { InProcessScheduler, MemoryStateStore } from '@sluice/state';
import { createLogger } from '@sluice/telemetry';
import { describe, expect, it } from 'vitest';
import { watchedReads } from '../../../../test/support/watched-reads.js';
import { InternalEventBus } from '../events/internal-events.js';
import { ChainRuns } from './chain-runs.js';

const DEF: ChainDefinition = { name: 'one', on_failure: 'abort', steps: [{ name: 's', provider: 'p', action_type: 'a' }] } as ChainDefinition;

describe('chain run retention', () => {
  it('reads a tenant a page at a time, oldest first, and stops at the first run started after the cutoff', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 29));
    const store = new MemoryStateStore({ clock });
    // Counts the run records read, to see the scan stop.
    let runReads = 0;
    const state = watchedReads(store, (key) => {
      if (key.kind === 'chain-run') runReads += 1;
    });
    // Not started: step jobs wait, runs stay as the test leaves them.
    const scheduler = new InProcessScheduler({ clock });
    const runs = new ChainRuns({
      state,
      clock,
      logger: createLogger({ level: 'silent', role: 'test' }),
      scheduler,
      events: new InternalEventBus(),
      definitions: { find: () => DEF, dag: () => ({ nodes: [], edges: [] }) as never },
      reapPage: 2,
    });
    const start = async (id: string) =>
      (
        await runs.start(
          DEF,
          {},
          {
            action: {
              id,
              namespace: 'ns',
              tenant: 't',
              provider: 'p',
              action_type: 'a',
              payload: {},
              metadata: {},
              created_at: new Date(clock.now()).toISOString(),
            } as never,
            rule: null,
          },
        )
      ).chainId;
    try {
      const ended = [await start('a1'), await start('a2'), await start('a3')];
      const running = await start('a4');
      for (const id of ended) await runs.cancel(id, null, 'test');
      const cutoff = clock.now();
      clock.advance(1000);
      const late = await start('a5');
      await runs.cancel(late, null, 'test'); // ended too, but started after the cutoff
      for (let i = 0; i < 20; i++) await start(`b${i}`);
      runReads = 0;
      expect(await runs.reapFinished('ns', 't', cutoff)).toBe(3);
      // The three ended, the running one, and the late one's page: not the 20 runs after it.
      expect(runReads).toBeLessThanOrEqual(3 * 2 + 1 + 2);
      const left = await runs.list({ namespace: 'ns', tenant: 't', limit: 100, offset: 0 });
      expect(left.chains.slice(-2).map((c) => c.chain_id)).toEqual([late, running]);
      expect(left.count).toBe(22);
      // Nothing more to do: the running run is passed over, the late one stops the scan.
      expect(await runs.reapFinished('ns', 't', cutoff)).toBe(0);
      expect(await runs.reapFinished('ns', 't', clock.now())).toBe(1);
    } finally {
      await scheduler.close();
      await store.close();
    }
  });
});
