import type { RuleSource } from './types.js';

/** The rule source as listings and traces show it: `yaml:<file>`, `cel:<file>` or `api`. */
export function formatRuleSource(source: RuleSource): string {
  return source.kind === 'api' ? 'api' : `${source.kind}:${source.file}`;
}
