import calculateSlot from 'cluster-key-slot';
import { describe, expect, it } from 'vitest';
import { spreadScopes } from '../src/spread-scopes.js';

describe('spreadScopes', () => {
  it("puts shard i's hash tag in the middle half of the i-th equal part of the slots", () => {
    for (const count of [1, 2, 3, 8, 12, 16]) {
      const scopes = spreadScopes('_', 'x', count);
      expect(scopes).toHaveLength(count);
      scopes.forEach(({ namespace, tenant }, i) => {
        const slot = calculateSlot(`{${namespace}:${tenant}}`);
        const width = 16_384 / count;
        expect(slot, `${count} shards, shard ${i}`).toBeGreaterThanOrEqual(i * width + width / 4);
        expect(slot).toBeLessThan((i + 1) * width - width / 4);
      });
    }
  });

  it("names the audit trail's shards as they were first written (durable key names: a change orphans logs and indexes)", () => {
    expect(spreadScopes('_', 'a', 12).map((s) => s.tenant)).toEqual([
      '#a0.10',
      '#a1.13',
      '#a2.12',
      '#a3.61',
      '#a4.51',
      '#a5.2',
      '#a6.21',
      '#a7.31',
      '#a8.9',
      '#a9.10',
      '#a10.10',
      '#a11.17',
    ]);
  });
});
