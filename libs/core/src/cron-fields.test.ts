import { describe, expect, it } from 'vitest';
import { cronFieldProblem } from './cron-fields.js';

describe('cronFieldProblem', () => {
  it('names the field of an out-of-range value, range or step', () => {
    expect(cronFieldProblem('60 * * * *')).toBe('minute value 60 is out of range (0-59)');
    expect(cronFieldProblem('0 1-24 * * *')).toBe('hour range 1-24 is out of range (0-23)');
    expect(cronFieldProblem('*/999999999 * * * *')).toBe('minute step 999999999 is out of range (1-59)');
  });

  it('refuses H, a random value, in any field and form; day names holding an H are fine', () => {
    for (const expr of ['H * * * *', 'h * * * *', '0 H/2 * * *', '0 0 H(1-7) * *', '0 0 * * 1,H']) {
      expect(cronFieldProblem(expr)).toMatch(/is not supported: H \(a random value\)/);
    }
    expect(cronFieldProblem('0 9 * * THU')).toBeNull();
    expect(cronFieldProblem('0 9 * * MON-THU')).toBeNull();
    expect(cronFieldProblem('@hourly')).toBeNull();
  });
});
