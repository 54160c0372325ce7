import { afterEach, describe, expect, it, vi } from 'vitest';
import { routeBullMqWarnings } from './console-warnings.js';

const EVICTION = 'IMPORTANT! Eviction policy is allkeys-lru. It should be "noeviction"';
const VERSION = 'It is highly recommended to use a minimum Redis version of 6.2.0\n             Current: 6.0.0';

describe('routeBullMqWarnings', () => {
  const original = console.warn;
  afterEach(() => {
    console.warn = original;
  });

  it("sends BullMQ's warnings to the first open reporter instead of the console, and nothing else", () => {
    const printed = vi.fn();
    console.warn = printed;
    const first: Error[] = [];
    const second: Error[] = [];
    const undoFirst = routeBullMqWarnings((err) => first.push(err));
    const undoSecond = routeBullMqWarnings((err) => second.push(err));
    console.warn(EVICTION);
    console.warn(VERSION);
    console.warn('something else', 42);
    expect(first.map((e) => e.message)).toEqual([EVICTION, 'It is highly recommended to use a minimum Redis version of 6.2.0 Current: 6.0.0']);
    expect(second).toEqual([]);
    expect(printed.mock.calls).toEqual([['something else', 42]]);

    // The console is given back once the last scheduler closes.
    undoFirst();
    console.warn(EVICTION);
    expect(second.map((e) => e.message)).toEqual([EVICTION]);
    undoSecond();
    expect(console.warn).toBe(printed);
    console.warn(EVICTION);
    expect(printed).toHaveBeenLastCalledWith(EVICTION);
  });
});
