import { ManualClock } from '@sluice/core';
import { MemoryStateStore, type StateStore } from '@sluice/state';
import { createLogger, type Logger } from '@sluice/telemetry';
import { afterEach, describe, expect, it } from 'vitest';
import { capturedLogLines } from '../../../../test/support/log-lines.js';
import { InternalEventBus } from '../events/internal-events.js';
import { StreamService } from './stream-service.js';

const logger = createLogger({ level: 'silent', role: 'test' });

/** A cluster-scope service on `state`, with a check every second. */
function clusterService(deps: { state: StateStore; clock: ManualClock; logger?: Logger; bus?: InternalEventBus }): StreamService {
  return new StreamService({
    logger,
    bus: new InternalEventBus(),
    ...deps,
    scope: 'cluster',
    maxConnectionsPerBucket: 10,
    maxQueued: 10,
    keepAliveMs: 15_000,
    leaseTtlMs: 30_000,
    checkIntervalMs: 1000,
    onConnections: () => {},
  });
}

describe('StreamService in cluster scope', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it('asks whether anyone listens once at a time: ticks finding a check in flight are skipped', async () => {
    const clock = new ManualClock();
    const store = new MemoryStateStore({ clock });
    let counts = 0;
    let answer: (() => void) | null = null;
    // The store as the service sees it: counting the "anyone listening?" reads, held until answered.
    const slow = new Proxy(store, {
      get(target, prop) {
        if (prop === 'indexCount')
          return async (...args: Parameters<StateStore['indexCount']>) => {
            counts++;
            if (counts > 1) await new Promise<void>((resolve) => (answer = resolve));
            return target.indexCount(...args);
          };
        const value: unknown = Reflect.get(target, prop);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const service = clusterService({ state: slow, clock });
    closers.push(() => service.close());
    await service.start();
    expect(counts).toBe(1);
    // A minute of ticks while the second check waits on the store: one check, not sixty.
    await clock.advanceAsync(60_000);
    expect(counts).toBe(2);
    // Once it is answered (advanceAsync lets it end first), the next tick checks again.
    answer!();
    await clock.advanceAsync(1000);
    expect(counts).toBe(3);
    answer!();
  });

  it('logs events it cannot publish (Redis away) once per 30 s, not once per event', async () => {
    const clock = new ManualClock();
    const store = new MemoryStateStore({ clock });
    let refusing = false;
    const away = new Proxy(store, {
      get(target, prop) {
        if (prop === 'publish')
          return (...args: Parameters<StateStore['publish']>) => (refusing ? Promise.reject(new Error('connect ECONNREFUSED')) : target.publish(...args));
        const value: unknown = Reflect.get(target, prop);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const { destination, lines } = capturedLogLines();
    const bus = new InternalEventBus();
    const service = clusterService({ state: away, clock, logger: createLogger({ level: 'info', role: 'test', destination }), bus });
    closers.push(() => service.close());
    await service.start();
    await service.subscribe({ write: () => true, onDrain: () => {} }, {}, () => true);
    refusing = true;
    const event = { type: 'approval_required', namespace: 'ns', tenant: 't', at: '2026-01-01T00:00:00.000Z', data: {} } as const;
    for (let i = 0; i < 20; i++) bus.emit(event);
    await clock.advanceAsync(30_000);
    bus.emit(event);
    await clock.advanceAsync(0);
    const failures = lines.filter((l) => l['msg'] === 'stream event not published');
    expect(failures.map((l) => l['suppressed'])).toEqual([0, 19]);
  });
});
