import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import { compileRe2 } from './operators.js';
import { estimatedProgramSize } from './regex-size-estimate.js';

describe('estimatedProgramSize', () => {
  it.each([
    'a{1000}',
    '(ab){600}',
    '(?:x{30}){30}',
    'x{0,1000}',
    'x{500,}',
    '[a-z]+@[a-z]+\\.com',
    '(?i)(password|api[_-]?key)\\s*[:=].*',
    '\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}',
    '(foo|bar|baz){300}',
    '(a|b|c){100}',
    `(?s).*${'a{1000}'.repeat(5)}b`,
  ])('is within a factor of 2 of what RE2 compiles %s to', (pattern) => {
    const real = RE2JS.compile(pattern).programSize();
    const estimate = estimatedProgramSize(pattern);
    expect(estimate).toBeGreaterThan(real / 2);
    expect(estimate).toBeLessThan(real * 2);
  });

  it('reads braces in classes and escaped ones as characters, not repeats', () => {
    expect(estimatedProgramSize('[{1000}]')).toBe(1);
    expect(estimatedProgramSize('\\{1000}')).toBeLessThan(10);
    expect(estimatedProgramSize('a{,5}')).toBeLessThan(10);
  });
});

describe('compileRe2 and the estimate', () => {
  it('refuses a pattern clearly over the limit without compiling it (its message gives the estimate)', () => {
    const refused = compileRe2('a{1000}'.repeat(146));
    expect(refused).toEqual({
      ok: false,
      message: expect.stringMatching(/^regular expression would compile to about 146000 instructions, over the limit of 1000/),
    });
  });

  it('compiles a pattern near the limit, whose compiled size decides', () => {
    expect(compileRe2('a{990}').ok).toBe(true);
    expect(compileRe2('a{750}b{750}')).toEqual({ ok: false, message: expect.stringMatching(/^regular expression compiles to 1502 instructions/) });
  });
});
