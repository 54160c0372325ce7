import type { paths } from '@sluice/client';

export type Matcher = { name: string; op: 'equal' | 'not_equal' | 'regex' | 'not_regex'; value: string };
type AuditRecord = paths['/v1/audit']['get']['responses'][200]['content']['application/json']['records'][number];

/** A record's `metadata.labels` (what silences match on); an absent label reads as "" as in Alertmanager. */
function labelOf(record: AuditRecord, name: string): string {
  const labels = record.metadata['labels'];
  const value = labels !== null && typeof labels === 'object' ? (labels as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : '';
}

/** RE2, as the gateway matches: loaded with the first regex preview (a separate chunk, not in every page load). */
type Re2 = typeof import('re2js').RE2JS;

/** One matcher as a test of a label's value, or the error of a pattern RE2 refuses. */
function valueTest(m: Matcher, re2: Re2 | null): (value: string) => boolean {
  if (m.op === 'equal') return (value) => value === m.value;
  if (m.op === 'not_equal') return (value) => value !== m.value;
  let re: InstanceType<Re2>;
  try {
    re = (re2 as Re2).compile(m.value);
  } catch (err) {
    // Counting it as "no match" would be wrong both ways (a not_regex would then match everything).
    throw new Error(`No preview for ${m.name} ${m.op === 'regex' ? '=~' : '!~'} ${m.value}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const wanted = m.op === 'regex';
  // Anchored at both ends, as the gateway anchors silence patterns; RE2 is linear in the value,
  // so a tenant's label cannot hang the tab the way a backtracking engine lets it.
  return (value) => re.testExact(value) === wanted;
}

/**
 * Whether a silence with these matchers would have caught a record: the gateway's rule, with
 * the gateway's engine (RE2). Throws, naming it, for a pattern RE2 refuses.
 */
export async function silenceMatcher(matchers: readonly Matcher[]): Promise<(record: AuditRecord) => boolean> {
  const re2 = matchers.some((m) => m.op === 'regex' || m.op === 'not_regex') ? (await import('re2js')).RE2JS : null;
  const tests = matchers.map((m) => ({ name: m.name, test: valueTest(m, re2) }));
  return (record) => tests.every(({ name, test }) => test(labelOf(record, name)));
}
