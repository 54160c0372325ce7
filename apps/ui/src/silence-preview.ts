import type { paths } from '@sluice/client';

export type Matcher = { name: string; op: 'equal' | 'not_equal' | 'regex' | 'not_regex'; value: string };
type AuditRecord = paths['/v1/audit']['get']['responses'][200]['content']['application/json']['records'][number];

/** A record's `metadata.labels` (what silences match on); an absent label reads as "" as in Alertmanager. */
function labelOf(record: AuditRecord, name: string): string {
  const labels = record.metadata['labels'];
  const value = labels !== null && typeof labels === 'object' ? (labels as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : '';
}

/**
 * Whether a silence with these matchers would have caught the record: the gateway's rule, with the
 * browser's regex engine standing in for RE2 (the same for the anchored patterns silences use; a
 * pattern the browser cannot read matches nothing here, and the gateway says why on create).
 */
export function matchesRecord(matchers: readonly Matcher[], record: AuditRecord): boolean {
  return matchers.every((m) => {
    const value = labelOf(record, m.name);
    if (m.op === 'equal') return value === m.value;
    if (m.op === 'not_equal') return value !== m.value;
    let re: RegExp;
    try {
      re = new RegExp(`^(?:${m.value})$`, 'u');
    } catch {
      return false;
    }
    return re.test(value) === (m.op === 'regex');
  });
}
