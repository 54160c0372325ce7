import type { z } from 'zod';

/** Start-up stops with this; the message names every offending key. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export function formatIssues(source: string, issues: readonly z.core.$ZodIssue[]): string {
  const lines = issues.flatMap((issue) => {
    const at = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((k) => `  - ${at ? `${at}.` : ''}${k}: unknown key`);
    }
    return [`  - ${at || '(root)'}: ${issue.message}`];
  });
  return `invalid configuration (${source}):\n${lines.join('\n')}`;
}
