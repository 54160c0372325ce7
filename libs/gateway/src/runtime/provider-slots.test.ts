import { describe, expect, it } from 'vitest';
import { providerSlots } from './provider-slots.js';

describe('each webhook’s share of the executor’s slots', () => {
  it('is all of them for a lone webhook, half each for several, and a configured max_concurrent wherever set', () => {
    expect(
      providerSlots(
        [
          { name: 'hook', type: 'webhook' },
          { name: 'n', type: 'noop' },
        ],
        64,
      ),
    ).toEqual(new Map([['hook', 64]]));
    const several = providerSlots(
      [
        { name: 'a', type: 'webhook' },
        { name: 'b', type: 'webhook', max_concurrent: 10 },
      ],
      64,
    );
    expect(several).toEqual(
      new Map([
        ['a', 32],
        ['b', 10],
      ]),
    );
    expect(
      providerSlots(
        [
          { name: 'a', type: 'webhook' },
          { name: 'b', type: 'webhook' },
        ],
        1,
      ).get('a'),
    ).toBe(1);
  });
});
