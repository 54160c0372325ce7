import type { paths } from '@sluice/client';

export type Matcher = { name: string; op: 'equal' | 'not_equal' | 'regex' | 'not_regex'; value: string };
type AuditRecord = paths['/v1/audit']['get']['responses'][200]['content']['application/json']['records'][number];

/** A record's `metadata.labels` (what silences match on); an absent label reads as "" as in Alertmanager. */
function labelOf(record: AuditRecord, name: string): string {
  const labels = record.metadata['labels'];
  const value = labels !== null && typeof labels === 'object' ? (labels as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : '';
}

/** One matcher as a test of a label's value, or the error of a pattern the browser cannot read. */
function valueTest(m: Matcher): (value: string) => boolean {
  if (m.op === 'equal') return (value) => value === m.value;
  if (m.op === 'not_equal') return (value) => value !== m.value;
  let re: RegExp;
  try {
    re = new RegExp(`^(?:${m.value})$`, 'u');
  } catch {
    // Counting it as "no match" would be wrong both ways (a not_regex would then match everything).
    throw new Error(
      `No preview for ${m.name} ${m.op === 'regex' ? '=~' : '!~'} ${m.value}: the browser cannot read this pattern (RE2 syntax such as (?i) or [[:alpha:]]); the gateway checks it on create`,
    );
  }
  const wanted = m.op === 'regex';
  return (value) => re.test(value) === wanted;
}

/**
 * Whether a silence with these matchers would have caught a record: the gateway's rule, with the
 * browser's regex engine standing in for RE2 (the same for the anchored patterns silences use).
 * Throws, naming it, for a pattern the browser cannot read.
 */
export function silenceMatcher(matchers: readonly Matcher[]): (record: AuditRecord) => boolean {
  const tests = matchers.map((m) => ({ name: m.name, test: valueTest(m) }));
  return (record) => tests.every(({ name, test }) => test(labelOf(record, name)));
}
