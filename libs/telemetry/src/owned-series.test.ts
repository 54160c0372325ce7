import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { OwnedSeries } from './owned-series.js';

describe('OwnedSeries', () => {
  it('drops the series of owners no longer live when a new label set appears, and keeps the live ones', async () => {
    const registry = new Registry();
    const counter = new Counter({ name: 'owned_total', help: 'h', labelNames: ['owner', 'kind'], registers: [registry] });
    const live = new Set(['a', 'b']);
    const series = new OwnedSeries(
      counter,
      (labels) => labels.owner ?? '',
      (owner) => live.has(owner),
    );
    const labelSets = async () => (await counter.get()).values.map((v) => `${v.labels.owner}/${v.labels.kind}=${v.value}`).sort();
    series.inc({ owner: 'a', kind: 'x' });
    series.inc({ owner: 'a', kind: 'x' });
    series.inc({ owner: 'b', kind: 'y' });
    live.delete('a');
    // A known label set adds no series: nothing is pruned yet.
    series.inc({ owner: 'b', kind: 'y' });
    expect(await labelSets()).toEqual(['a/x=2', 'b/y=2']);
    live.add('c');
    series.inc({ owner: 'c', kind: 'x' });
    expect(await labelSets()).toEqual(['b/y=2', 'c/x=1']);
  });
});
