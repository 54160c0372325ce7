import type { ErrorDetail, SilenceMatcher } from '@sluice/core';
import { compileRe2, evaluationLimits } from '@sluice/rules';

type Re2Program = Extract<ReturnType<typeof compileRe2>, { ok: true }>['regex'];

/** The spec's limits on a regex matcher: its text, and its compiled automaton. */
const MAX_MATCHER_REGEX_LENGTH = 256;
const MAX_MATCHER_PROGRAM_BYTES = 64 * 1024;
/** RE2 programs are measured in instructions; 16 bytes is the size of one, as RE2 lays them out. */
const BYTES_PER_INSTRUCTION = 16;

/** The labels of an action (`metadata.labels`), as matchers read them. */
export type Labels = Readonly<Record<string, unknown>>;

export type LabelTest = (labels: Labels) => boolean;

/**
 * An absent (or non-string) label reads as the empty string, as in Alertmanager: `env != prod`
 * holds for an action without `env`, `env =~ .*` holds too, `env =~ .+` does not.
 */
function labelValue(labels: Labels, name: string): string {
  const value = labels[name];
  return typeof value === 'string' ? value : '';
}

/** Characters with a meaning in RE2 syntax; a pattern free of them is a literal. */
const META = /[\\^$.|?*+()[\]{}]/;

/**
 * An exact plain-JS test for the commonest patterns, which RE2 would otherwise run on every
 * dispatch: a literal, literals joined by `|`, a literal followed by `.*`, `.*` and `.+`.
 * Anything else (or any flag, class or escape) is left to RE2. Full-match semantics throughout,
 * and `.` does not match a newline, as in RE2.
 */
export function simplePattern(pattern: string): ((value: string) => boolean) | null {
  if (pattern === '.*') return (v) => !v.includes('\n');
  if (pattern === '.+') return (v) => v.length > 0 && !v.includes('\n');
  if (pattern.endsWith('.*') && !META.test(pattern.slice(0, -2))) {
    const prefix = pattern.slice(0, -2);
    return (v) => v.startsWith(prefix) && !v.includes('\n', prefix.length);
  }
  const alternatives = pattern.split('|');
  if (alternatives.every((a) => !META.test(a))) {
    if (alternatives.length === 1) return (v) => v === pattern;
    const set = new Set(alternatives);
    return (v) => set.has(v);
  }
  return null;
}

/**
 * RE2's cost grows with program size × input length once its DFA cache overflows (a 4,000
 * instruction program scans 64 KB in seconds; RE2JS manages about 30 million
 * instruction-characters a second at worst): a value is scanned only when that product stays
 * under this many instruction-characters, and always up to 1 KiB.
 */
const REGEX_SCAN_BUDGET = 4_000_000;
const MIN_SCANNED_LENGTH = 1024;

function maxScannedLength(programSize: number): number {
  return Math.min(evaluationLimits().regexMaxInputLength, Math.max(MIN_SCANNED_LENGTH, Math.floor(REGEX_SCAN_BUDGET / programSize)));
}

/**
 * And every regex scan of one lookup (all the silences of an action's scope, 64 matchers each)
 * shares a budget of two such scans at their largest (a 64 KB program on 1 KiB), about 300 ms:
 * past it a regex matcher holds for no value, so the silences left do not apply (failing open
 * delivers the action), however many a tenant made.
 */
const LOOKUP_SCAN_BUDGET = 8_400_000;
let lookupScanLeft = Number.POSITIVE_INFINITY;

/** Runs one lookup of silences under the shared scan budget. */
export function withRegexScanBudget<T>(lookup: () => T): T {
  lookupScanLeft = LOOKUP_SCAN_BUDGET;
  try {
    return lookup();
  } finally {
    lookupScanLeft = Number.POSITIVE_INFINITY;
  }
}

/** Takes a scan's cost from the lookup's budget; false (nothing taken) when it is not there. */
function chargeScan(cost: number): boolean {
  if (cost > lookupScanLeft) return false;
  lookupScanLeft -= cost;
  return true;
}

/**
 * Anchored at both ends (testExact), so `warn.*` matches `warning` and not `prewarning`. The RE2
 * program is kept only when a pattern needs it: a snapshot of thousands of silences would
 * otherwise hold thousands of compiled programs the fast paths never run. A value too long to
 * scan satisfies neither `=~` nor `!~`: the silence does not apply (a silence mutes, so failing
 * open delivers the action).
 */
function regexTest(pattern: string, regex: Re2Program, negated: boolean): (value: string) => boolean {
  const simple = simplePattern(pattern);
  if (simple) return negated ? (v) => !simple(v) : simple;
  const size = regex.programSize();
  const maxLength = maxScannedLength(size);
  return (v) => v.length <= maxLength && chargeScan(size * v.length) && regex.testExact(v) !== negated;
}

function compileOne(m: SilenceMatcher, at: string, problems: ErrorDetail[]): LabelTest | null {
  const { name, value } = m;
  switch (m.op) {
    case 'equal':
      return (labels) => labelValue(labels, name) === value;
    case 'not_equal':
      return (labels) => labelValue(labels, name) !== value;
    case 'regex':
    case 'not_regex': {
      const compiled = compileRe2(value, {
        maxLength: MAX_MATCHER_REGEX_LENGTH,
        maxProgramSize: Number.POSITIVE_INFINITY,
        maxEstimatedSize: MAX_MATCHER_PROGRAM_BYTES / BYTES_PER_INSTRUCTION,
      });
      if (!compiled.ok) {
        problems.push({ path: `${at}.value`, message: `matcher ${name}: ${compiled.message}` });
        return null;
      }
      const bytes = compiled.regex.programSize() * BYTES_PER_INSTRUCTION;
      if (bytes > MAX_MATCHER_PROGRAM_BYTES) {
        problems.push({
          path: `${at}.value`,
          message: `matcher ${name}: regular expression compiles to more than 64 KB (about ${Math.ceil(bytes / 1024)} KB)`,
        });
        return null;
      }
      const test = regexTest(value, compiled.regex, m.op === 'not_regex');
      return (labels) => test(labelValue(labels, name));
    }
  }
}

/** Equality tests first: they are the cheapest, and the first that fails spares the regexes. */
const COST: Readonly<Record<SilenceMatcher['op'], number>> = { equal: 0, not_equal: 0, regex: 1, not_regex: 1 };

/**
 * Compiles matchers to one test (all must hold), or the problems found, each naming its matcher.
 * Past the first problem no further regex is compiled (a refused silence should cost little):
 * the problems then name every bad equality matcher but only the first bad regex.
 */
export function compileMatchers(matchers: readonly SilenceMatcher[]): { ok: true; test: LabelTest } | { ok: false; problems: ErrorDetail[] } {
  const problems: ErrorDetail[] = [];
  const tests = matchers.map((m, i) => (problems.length > 0 && COST[m.op] > 0 ? null : compileOne(m, `matchers.${i}`, problems)));
  if (problems.length > 0) return { ok: false, problems };
  const order = matchers.map((m, i) => ({ cost: COST[m.op], i })).sort((a, b) => a.cost - b.cost || a.i - b.i);
  const all = order.map(({ i }) => tests[i] as LabelTest);
  if (all.length === 1) return { ok: true, test: all[0] as LabelTest };
  return {
    ok: true,
    test: (labels) => {
      for (let i = 0; i < all.length; i++) if (!(all[i] as LabelTest)(labels)) return false;
      return true;
    },
  };
}
