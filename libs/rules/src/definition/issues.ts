import type { z } from 'zod';
import type { RuleDefinitionIssue } from '../errors.js';

/** Collects definition problems while compiling, so one pass reports all of them. */
export class IssueList {
  readonly items: RuleDefinitionIssue[] = [];

  add(path: string, message: string): void {
    this.items.push({ path, message });
  }

  get isEmpty(): boolean {
    return this.items.length === 0;
  }

  /** Records zod issues under `base` (unknown keys become one issue each, naming the key). */
  addZod(base: string, issues: readonly z.core.$ZodIssue[]): void {
    for (const issue of issues) {
      const at = issue.path.reduce<string>((p, seg) => joinPath(p, String(seg)), base);
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) this.add(joinPath(at, key), `unknown key "${key}"`);
      } else if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) {
        this.add(at, 'required');
      } else {
        this.add(at, issue.message);
      }
    }
  }
}

/** Dotted path inside a rule definition: `condition.all.0.field`. */
export function joinPath(base: string, key: string | number): string {
  return base === '' ? String(key) : `${base}.${key}`;
}

/** A short, readable rendering of an offending value for messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}
