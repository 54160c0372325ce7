import type { ErrorDetail, SilenceMatcher } from '@sluice/core';
import { compileRe2 } from '@sluice/rules';

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

function compileOne(m: SilenceMatcher, at: string, problems: ErrorDetail[]): LabelTest | null {
  const { name, value } = m;
  switch (m.op) {
    case 'equal':
      return (labels) => labelValue(labels, name) === value;
    case 'not_equal':
      return (labels) => labelValue(labels, name) !== value;
    case 'regex':
    case 'not_regex': {
      const compiled = compileRe2(value, MAX_MATCHER_REGEX_LENGTH);
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
      const regex = compiled.regex;
      // testExact: anchored at both ends, so `warn.*` matches `warning` and not `prewarning`.
      return m.op === 'regex' ? (labels) => regex.testExact(labelValue(labels, name)) : (labels) => !regex.testExact(labelValue(labels, name));
    }
  }
}

/** Compiles matchers to one test (all must hold), or the problems found, each naming its matcher. */
export function compileMatchers(matchers: readonly SilenceMatcher[]): { ok: true; test: LabelTest } | { ok: false; problems: ErrorDetail[] } {
  const problems: ErrorDetail[] = [];
  const tests = matchers.map((m, i) => compileOne(m, `matchers.${i}`, problems));
  if (problems.length > 0) return { ok: false, problems };
  const all = tests as LabelTest[];
  if (all.length === 1) return { ok: true, test: all[0] as LabelTest };
  return {
    ok: true,
    test: (labels) => {
      for (let i = 0; i < all.length; i++) if (!(all[i] as LabelTest)(labels)) return false;
      return true;
    },
  };
}
