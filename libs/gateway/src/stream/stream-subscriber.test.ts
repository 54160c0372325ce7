import { describe, expect, it } from 'vitest';
import type { StreamEvent } from './stream-event.js';
import { StreamSubscriber, type FrameSink } from './stream-subscriber.js';

/** A socket that takes `room` frames, then backs up until drained. */
class FakeSocket implements FrameSink {
  written: string[] = [];
  room = Number.POSITIVE_INFINITY;
  private drainListener: () => void = () => {};
  write(frame: string): boolean {
    this.written.push(frame);
    this.room -= 1;
    return this.room > 0;
  }
  onDrain(listener: () => void): void {
    this.drainListener = listener;
  }
  drain(room: number): void {
    this.room = room;
    this.drainListener();
  }
}

const event = (n: number): StreamEvent => ({ id: `e${n}`, type: 'group_flushed', timestamp: 't', namespace: 'n', tenant: 't', fields: { n } });
const numbers = (frames: string[]) =>
  frames.map((f) => (f.startsWith('event: lagged') ? `lagged ${/"skipped":(\d+)/.exec(f)?.[1]}` : /"n":(\d+)/.exec(f)?.[1]));

describe('a stream subscriber', () => {
  it('queues at most maxQueued events while the socket is backed up; beyond, skips them and says so with lagged', () => {
    const socket = new FakeSocket();
    const sub = new StreamSubscriber(socket, 3, () => true);
    socket.room = 2;
    for (let n = 1; n <= 10; n++) sub.offer(event(n));
    // 1 and 2 written (the second backs the socket up); 3-5 queued; 6 overflows: 3-6 skipped; 7-9 queued; 10 overflows: 7-10 skipped.
    expect(numbers(socket.written)).toEqual(['1', '2']);
    sub.offer(event(11));
    socket.drain(100);
    expect(numbers(socket.written)).toEqual(['1', '2', 'lagged 8', '11']);
    sub.offer(event(12));
    expect(numbers(socket.written).at(-1)).toBe('12');
  });

  it('delivers queued events in order once the socket drains, without a lagged frame when nothing was skipped', () => {
    const socket = new FakeSocket();
    const sub = new StreamSubscriber(socket, 5, (e) => (e.fields['n'] as number) % 2 === 0);
    socket.room = 1;
    for (let n = 1; n <= 6; n++) sub.offer(event(n));
    socket.drain(100);
    expect(numbers(socket.written)).toEqual(['2', '4', '6']);
  });
});
