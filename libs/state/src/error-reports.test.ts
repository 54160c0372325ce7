import { describe, expect, it } from 'vitest';
import { throttleErrors } from './error-reports.js';

describe('throttleErrors', () => {
  function setup() {
    let t = 0;
    const reports: { message: string; suppressed: number }[] = [];
    const report = throttleErrors((err, { suppressed }) => reports.push({ message: err.message, suppressed }), { windowMs: 1000, now: () => t });
    return { report, reports, advance: (ms: number) => (t += ms) };
  }

  it('passes the first of identical errors and counts the rest until the window has passed', () => {
    const { report, reports, advance } = setup();
    for (let i = 0; i < 5; i++) report(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
    expect(reports).toEqual([{ message: 'connect ECONNREFUSED 127.0.0.1:6379', suppressed: 0 }]);
    advance(999);
    report(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
    expect(reports).toHaveLength(1);
    advance(1);
    report(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
    expect(reports[1]).toEqual({ message: 'connect ECONNREFUSED 127.0.0.1:6379', suppressed: 5 });
  });

  it('throttles each message on its own, and wraps what is not an Error', () => {
    const { report, reports } = setup();
    report(new Error('a'));
    report('b');
    report(new Error('a'));
    expect(reports).toEqual([
      { message: 'a', suppressed: 0 },
      { message: 'b', suppressed: 0 },
    ]);
  });

  it('forgets expired messages once many distinct ones were seen, telling what they held back first', () => {
    const { report, reports, advance } = setup();
    for (let i = 0; i < 100; i++) report(new Error(`e${i}`));
    report(new Error('e1'));
    advance(1000);
    report(new Error('new'));
    // Forgotten: e1 told its held-back count on the way out, and e0 starts again from nothing.
    report(new Error('e0'));
    report(new Error('e1'));
    expect(reports.slice(-4)).toEqual([
      { message: 'e1', suppressed: 1 },
      { message: 'new', suppressed: 0 },
      { message: 'e0', suppressed: 0 },
      { message: 'e1', suppressed: 0 },
    ]);
  });
});
