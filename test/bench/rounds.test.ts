import { describe, expect, it } from 'vitest';
import { medianRun, medianRuns } from './rounds.js';
import type { ScenarioResult } from './scenario-result.js';

/** Only what the rounds read: the scenario and its throughput (and a tag to tell runs apart). */
function run(id: string, reqPerSec: number): ScenarioResult {
  return { id, reqPerSec, tag: `${id}@${reqPerSec}` } as unknown as ScenarioResult;
}

describe('bench rounds', () => {
  it('reports the run with the median throughput, the lower middle one of an even number', () => {
    expect(medianRun([run('b', 3000), run('b', 2000), run('b', 5000)])).toMatchObject({ tag: 'b@3000' });
    expect(medianRun([run('b', 4000), run('b', 2000)])).toMatchObject({ tag: 'b@2000' });
    expect(medianRun([run('b', 4000), run('b', 1000), run('b', 3000), run('b', 2000)])).toMatchObject({ tag: 'b@2000' });
    expect(medianRun([run('k', 7)])).toMatchObject({ tag: 'k@7' });
    expect(() => medianRun([])).toThrow(/no runs/);
  });

  it('reduces rounds taken in turn to one run per scenario, in the order they ran', () => {
    const rounds = [
      run('a', 12000),
      run('b', 3000),
      run('k', 2400),
      run('a', 10000),
      run('b', 3600),
      run('k', 2000),
      run('a', 11000),
      run('b', 3300),
      run('k', 2900),
    ];
    expect(medianRuns(rounds).map((r) => (r as unknown as { tag: string }).tag)).toEqual(['a@11000', 'b@3300', 'k@2400']);
  });
});
