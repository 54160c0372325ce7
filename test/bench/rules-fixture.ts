/**
 * Rule directories for the rule scenarios, written as the files an operator would mount
 * (`rules.directory`). The non-matching mix follows test/bench/rules-eval.bench.ts: one
 * condition per operator and form, plus an expression (CEL) rule every 20 rules, none of which
 * matches SAMPLE_ACTION; the deciding rule has the highest priority number, so every other rule
 * runs first (the worst case for first-match).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';

interface RuleFileEntry {
  name: string;
  priority: number;
  condition?: unknown;
  expression?: string;
  action: Record<string, unknown>;
}

/** Conditions that do not match SAMPLE_ACTION, one per operator and form (also used by rules-eval.bench.ts). */
export function nonMatchingCondition(i: number): unknown {
  const n = String(i);
  const templates: unknown[] = [
    { field: 'action.tenant', eq: `tenant-${n}` },
    { field: 'action.namespace', not_eq: 'billing' },
    { field: 'action.provider', in: Array.from({ length: 10 }, (_, k) => `provider-${n}-${k}`) },
    { field: 'action.payload.tags', contains: `tag-${n}` },
    { field: 'action.payload.subject', starts_with: `URGENT ${n}` },
    { field: 'action.payload.customer.email', ends_with: `@blocked-${n}.example` },
    { field: 'action.payload.subject', matches: `(?i).*(lottery|prize)-${n}.*` },
    { field: 'action.payload.amount', gt: 100_000 + i },
    { field: 'action.payload.amount', lte: 10 },
    { field: 'action.payload.items.0.quantity', gte: 500 },
    { field: 'action.metadata.env', lt: 'a' },
    { field: 'action.payload.absent.deep', eq: n },
    {
      all: [
        { field: 'action.tenant', eq: 'acme' },
        {
          any: [
            { field: 'action.payload.amount', gt: 1e9 },
            { field: 'state.current', eq: `closed-${n}` },
          ],
        },
      ],
    },
    {
      any: [
        { field: 'action.action_type', eq: `type-${n}` },
        {
          all: [
            { field: 'action.payload.vip', eq: true },
            { field: 'action.payload.region', in: ['us', 'ca'] },
          ],
        },
      ],
    },
  ];
  return templates[i % templates.length];
}

/** `count` non-matching rules: condition rules in YAML, every 20th an expression rule. */
function nonMatchingRules(count: number): { yaml: RuleFileEntry[]; cel: RuleFileEntry[] } {
  const yaml: RuleFileEntry[] = [];
  const cel: RuleFileEntry[] = [];
  for (let i = 0; i < count; i++) {
    const name = `bench-miss-${String(i).padStart(3, '0')}`;
    const action = { type: 'suppress', reason: name };
    if (i % 20 === 19) {
      cel.push({ name, priority: i, expression: `action.payload.amount > ${100_000 + i} && action.tenant in ["acme", "globex"]`, action });
    } else {
      yaml.push({ name, priority: i, condition: nonMatchingCondition(i), action });
    }
  }
  return { yaml, cel };
}

/** The rule that decides SAMPLE_ACTION, evaluated last. */
const MATCHING_SUPPRESS: RuleFileEntry = {
  name: 'bench-match-suppress',
  priority: 1000,
  condition: {
    all: [
      { field: 'action.tenant', eq: 'acme' },
      { field: 'action.payload.amount', gt: 10 },
    ],
  },
  action: { type: 'suppress', reason: 'benchmark' },
};

const DEDUP_RULE: RuleFileEntry = {
  name: 'bench-dedup',
  priority: 10,
  condition: { field: 'action.tenant', eq: 'acme' },
  action: { type: 'deduplicate', ttl_seconds: 3600 },
};

export type RuleSetName = 'none' | 'miss100-suppress' | 'dedup';

/** Number of rules the server must report for each set (the runner checks GET /v1/rules). */
export function ruleCount(set: RuleSetName): number {
  return set === 'none' ? 0 : set === 'dedup' ? 1 : 101;
}

/** Writes the rule set into a fresh directory; null for 'none'. */
export function writeRulesDir(set: RuleSetName): string | null {
  if (set === 'none') return null;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-rules-'));
  if (set === 'dedup') {
    writeFileSync(join(dir, 'dedup.yaml'), stringify({ rules: [DEDUP_RULE] }));
    return dir;
  }
  const { yaml, cel } = nonMatchingRules(100);
  writeFileSync(join(dir, 'rules.yaml'), stringify({ rules: [...yaml, MATCHING_SUPPRESS] }));
  writeFileSync(join(dir, 'rules.cel'), stringify({ rules: cel }));
  return dir;
}
