import type { ChainDefinition } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { reachableSubChains } from './chain-checks.js';

const chain = (name: string, ...subs: string[]): ChainDefinition => ({
  name,
  on_failure: 'abort',
  steps: [{ name: 'first', provider: 'p', action_type: 'a' }, ...subs.map((sub) => ({ name: `to-${sub}`, sub_chain: sub }))],
});

describe('the sub-chains a run keeps', () => {
  it('collects every sub-chain it can reach, itself left out and a missing one skipped', () => {
    const defs = new Map([chain('b', 'c'), chain('c'), chain('d')].map((d) => [d.name, d]));
    const reach = reachableSubChains(chain('a', 'b', 'gone'), (name) => defs.get(name));
    expect(reach).toEqual({ subChains: { b: defs.get('b'), c: defs.get('c') } });
  });

  it('returns the cycle instead when the definitions hold one (two writes at once can store it)', () => {
    const defs = new Map([chain('b', 'c'), chain('c', 'a')].map((d) => [d.name, d]));
    expect(reachableSubChains(chain('a', 'b'), (name) => defs.get(name))).toEqual({ cycle: ['a', 'b', 'c', 'a'] });
  });
});
