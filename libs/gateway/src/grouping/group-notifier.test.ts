import { ManualClock, type Action, type EventGroup } from '@sluice/core';
import { MemoryStateStore, type StateStore } from '@sluice/state';
import { createLogger } from '@sluice/telemetry';
import { describe, expect, it } from 'vitest';
import { racingStore } from '../../../../test/support/racing-store.js';
import { InternalEventBus } from '../events/internal-events.js';
import type { ExecutionResult } from '../stages/execute-stage.js';
import { flushId, outboxKey } from './group-keys.js';
import { decodeOutbox, type Outbox } from './group-outbox.js';
import { GroupNotifier } from './group-notifier.js';

const scope = { namespace: 'ns', tenant: 't' };
const job = { ...scope, group_key: 'k', group_id: 'g1', cycle: 1 };
const id = flushId(job);

function notifier(state: StateStore, clock: ManualClock, answer: () => ExecutionResult) {
  const sent: Action[] = [];
  const deliverer = new GroupNotifier<string>({
    state,
    clock,
    scheduler: { enqueue: async () => ({ enqueued: true }) },
    providers: { get: (name: string) => name },
    executor: {
      execute: async (_provider: string, action: Action) => {
        sent.push(action);
        return answer();
      },
    },
    events: new InternalEventBus(),
    logger: createLogger({ level: 'silent', role: 'test' }),
    leaseMs: 60_000,
  });
  return { deliverer, sent };
}

describe('GroupNotifier', () => {
  it('a final failure is written before the delivery is given back: a delivery that follows finds it settled, never overwritten', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const state = new MemoryStateStore({ clock });
    const outbox: Outbox = {
      flush_id: id,
      job,
      reason: 'group_wait',
      group: { group_id: 'g1', group_key: 'k', namespace: 'ns', tenant: 't', provider: 'p', action_type: 'a', labels: {}, events: [] } as unknown as EventGroup,
      next: null,
      claimed_at: clock.now(),
      sent_at: null,
      failed: null,
    };
    await state.set(outboxKey(scope, id), JSON.stringify(outbox));
    // Ours fails for good; another process's delivery (a repeat of the job) lands just before we write the failure, and would succeed.
    const { store, beforeNext } = racingStore(state, 'set');
    const ours = notifier(store, clock, () => ({ ok: false, error: { code: 'EXECUTION_FAILED', message: 'boom', retryable: false, attempts: 1 } }));
    const theirs = notifier(state, clock, () => ({ ok: true, response: { status: 'success', body: null, headers: {} }, attempts: 1 }));
    let theirResult: unknown;
    beforeNext(async () => (theirResult = await theirs.deliverer.deliver(scope, id, { finalAttempt: false })));
    expect(await ours.deliverer.deliver(scope, id, { finalAttempt: false })).toMatchObject({ notified: false, retryable: false });
    expect(theirResult).toMatchObject({ notified: false, retryable: true });
    expect(theirs.sent).toHaveLength(0);
    expect(decodeOutbox(await state.get(outboxKey(scope, id)))).toMatchObject({ failed: 'boom', sent_at: null });
    // The delivery is given back: a later attempt finds the outbox settled.
    expect(await theirs.deliverer.deliver(scope, id, { finalAttempt: false })).toMatchObject({ notified: false, retryable: false, error: 'boom' });
  });
});
