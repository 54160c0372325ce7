import { describe, expect, it } from 'vitest';
import { InternalEventBus, type InternalEvent } from './internal-events.js';

const event = (type: string): InternalEvent => ({ type, namespace: 'n', tenant: 't', at: '2026-01-01T00:00:00.000Z', data: {} });

describe('InternalEventBus', () => {
  it('delivers to every listener, counts, isolates a throwing listener, and unsubscribes', () => {
    const counted: string[] = [];
    const failures: unknown[] = [];
    const bus = new InternalEventBus({ onEmit: (t) => counted.push(t), onListenerError: (err) => failures.push(err) });
    const seen: string[] = [];
    bus.on(() => {
      throw new Error('boom');
    });
    const off = bus.on((e) => seen.push(e.type));
    bus.emit(event('group_flushed'));
    off();
    bus.emit(event('timeout'));
    expect(seen).toEqual(['group_flushed']);
    expect(counted).toEqual(['group_flushed', 'timeout']);
    expect(failures).toHaveLength(2);
  });
});
