import { describe, expect, it } from 'vitest';
import { coverageReport } from '../src/coverage/index.js';

const entry = (action_type: string, covered: number, uncovered: number, matched_rules: string[]) => ({
  namespace: 'n',
  tenant: 't',
  provider: 'p',
  action_type,
  total: covered + uncovered,
  covered,
  uncovered,
  matched_rules,
});

describe('coverageReport', () => {
  it('summarises the entries and lists the enabled rules nothing matched, sorted', () => {
    const entries = [entry('digest', 0, 4, []), entry('send', 2, 3, ['allow-vip']), entry('spam', 5, 0, ['block-spam', 'gone'])];
    const report = coverageReport(
      { scannedFromMs: Date.UTC(2026, 0, 1), scannedToMs: Date.UTC(2026, 0, 8), entries },
      { loaded: 5, enabled: ['zeta', 'block-spam', 'alpha', 'allow-vip'] },
    );
    expect(report).toEqual({
      scanned_from: '2026-01-01T00:00:00.000Z',
      scanned_to: '2026-01-08T00:00:00.000Z',
      total_actions: 14,
      unique_combinations: 3,
      fully_covered: 1,
      partially_covered: 1,
      uncovered: 1,
      rules_loaded: 5,
      entries,
      unmatched_rules: ['alpha', 'zeta'],
    });
  });

  it('reports every enabled rule as unmatched when nothing was counted', () => {
    const report = coverageReport({ scannedFromMs: 0, scannedToMs: 0, entries: [] }, { loaded: 2, enabled: ['b', 'a'] });
    expect(report).toMatchObject({
      total_actions: 0,
      unique_combinations: 0,
      fully_covered: 0,
      partially_covered: 0,
      uncovered: 0,
      unmatched_rules: ['a', 'b'],
    });
  });
});
