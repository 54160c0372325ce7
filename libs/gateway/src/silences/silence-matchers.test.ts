import type { SilenceMatcher } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { compileRe2 } from '@sluice/rules';
import { compileMatchers, simplePattern, type Labels } from './silence-matchers.js';

function test(matchers: SilenceMatcher[], labels: Labels): boolean {
  const compiled = compileMatchers(matchers);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  return compiled.test(labels);
}

const m = (name: string, op: SilenceMatcher['op'], value: string): SilenceMatcher => ({ name, op, value });

describe('silence matchers', () => {
  it('anchors regexes at both ends: warn.* matches warning, not prewarning', () => {
    expect(test([m('severity', 'regex', 'warn.*')], { severity: 'warning' })).toBe(true);
    expect(test([m('severity', 'regex', 'warn.*')], { severity: 'prewarning' })).toBe(false);
    expect(test([m('severity', 'not_regex', 'warn.*')], { severity: 'prewarning' })).toBe(true);
    expect(test([m('severity', 'regex', 'warn')], { severity: 'warning' })).toBe(false);
  });

  it.each([
    // An absent label reads as the empty string, as in Alertmanager.
    ['equal to a value', m('env', 'equal', 'prod'), false],
    ['equal to the empty string', m('env', 'equal', ''), true],
    ['not_equal to a value', m('env', 'not_equal', 'prod'), true],
    ['not_equal to the empty string', m('env', 'not_equal', ''), false],
    ['regex .*', m('env', 'regex', '.*'), true],
    ['regex .+', m('env', 'regex', '.+'), false],
    ['not_regex .+', m('env', 'not_regex', '.+'), true],
    ['not_regex .*', m('env', 'not_regex', '.*'), false],
  ])('absent label, %s', (_name, matcher, expected) => {
    expect(test([matcher], { other: 'x' })).toBe(expected);
    expect(test([matcher], {})).toBe(expected);
  });

  it('ANDs matchers', () => {
    const both = [m('env', 'equal', 'prod'), m('team', 'regex', 'db|cache')];
    expect(test(both, { env: 'prod', team: 'db' })).toBe(true);
    expect(test(both, { env: 'prod', team: 'web' })).toBe(false);
    expect(test(both, { env: 'dev', team: 'db' })).toBe(false);
  });

  it('refuses a regex over 256 characters, naming the matcher', () => {
    expect(compileMatchers([m('host', 'regex', 'a'.repeat(256))]).ok).toBe(true);
    const refused = compileMatchers([m('env', 'equal', 'x'), m('host', 'regex', 'a'.repeat(257))]);
    expect(refused).toEqual({ ok: false, problems: [{ path: 'matchers.1.value', message: 'matcher host: regular expression is longer than 256 characters' }] });
  });

  it('refuses an invalid regex, naming the matcher', () => {
    const refused = compileMatchers([m('host', 'not_regex', 'db-(')]);
    expect(refused.ok).toBe(false);
    if (!refused.ok)
      expect(refused.problems[0]).toMatchObject({ path: 'matchers.0.value', message: expect.stringMatching(/^matcher host: invalid regular expression/) });
  });

  it('refuses a short regex whose compiled automaton is over 64 KB', () => {
    const big = 'a{1000}b{1000}c{1000}d{1000}e{1000}';
    expect(big.length).toBeLessThan(256);
    const refused = compileMatchers([m('host', 'regex', big)]);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.problems[0]?.message).toMatch(/compiles to more than 64 KB/);
    expect(compileMatchers([m('host', 'regex', 'a{1000}')]).ok).toBe(true);
  });

  it('refuses a regex clearly over the limit before compiling it, and compiles no regex past the first refused one', () => {
    const huge = 'a{1000}'.repeat(36); // 252 characters, about 36,000 instructions
    const refused = compileMatchers(Array.from({ length: 64 }, (_, i) => m(`l${i}`, 'regex', huge)));
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.problems).toEqual([
        { path: 'matchers.0.value', message: expect.stringMatching(/^matcher l0: regular expression would compile to about 36000 instructions/) },
      ]);
    }
  });

  it('refuses lookarounds and backreferences (RE2: linear time, no ReDoS)', () => {
    expect(compileMatchers([m('host', 'regex', '(a+)+\\1')]).ok).toBe(false);
    expect(compileMatchers([m('host', 'regex', 'a(?=b)')]).ok).toBe(false);
  });

  it('answers exactly as RE2 does on the patterns it runs without RE2', () => {
    const patterns = ['warn.*', '.*', '.+', 'prod', 'prod|staging|dev', 'a|', '', 'db-1-.*', 'x.*'];
    const values = [
      '',
      'warn',
      'warning',
      'prewarning',
      'warn\nx',
      'prod',
      'staging',
      'dev',
      'production',
      'a',
      'db-1-main',
      'db-1-',
      'db-10',
      'x',
      'x\n',
      '\n',
    ];
    for (const pattern of patterns) {
      const fast = simplePattern(pattern);
      expect(fast, pattern).not.toBeNull();
      const re2 = compileRe2(pattern);
      if (!re2.ok) throw new Error(re2.message);
      for (const value of values) expect(fast?.(value), `${JSON.stringify(pattern)} on ${JSON.stringify(value)}`).toBe(re2.regex.testExact(value));
    }
    for (const pattern of ['db-[0-9]+', 'a.b', '(?i)prod', 'a\\.b', 'x+', 'a|b.*']) expect(simplePattern(pattern), pattern).toBeNull();
  });
});
