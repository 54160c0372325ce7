import { MAX_ACTIONS_PER_WINDOW, MAX_GROUP_SIZE, MAX_WAIT_SECONDS, boundedCount, durationSeconds } from '@sluice/core';
import { z } from 'zod';
import { MAX_VALUE_DEPTH, cloneJson, isPlainObject, nestsDeeperThan } from '../json-values.js';
import type { RuleAction, RuleActionType } from '../types.js';
import { describeValue, joinPath, type IssueList } from './issues.js';

const Name = z.string().min(1).max(256);
/** TTLs, windows and waits: 1 s to 30 days (docs/rules.md, "Limits"). */
const WaitSeconds = durationSeconds(MAX_WAIT_SECONDS);

/** One strict schema per action type; field names exactly as RuleAction declares them. */
const ACTION_SCHEMAS = {
  allow: z.strictObject({ type: z.literal('allow'), metadata: z.record(z.string(), z.unknown()).optional() }),
  suppress: z.strictObject({ type: z.literal('suppress'), reason: z.string().max(1024).optional() }),
  deduplicate: z.strictObject({ type: z.literal('deduplicate'), ttl_seconds: WaitSeconds }),
  throttle: z.strictObject({
    type: z.literal('throttle'),
    max_count: boundedCount(MAX_ACTIONS_PER_WINDOW),
    window_seconds: WaitSeconds,
    message: z.string().max(1024).optional(),
  }),
  reroute: z.strictObject({ type: z.literal('reroute'), target_provider: Name }),
  modify: z.strictObject({
    type: z.literal('modify'),
    changes: z.record(z.string(), z.unknown(), { error: 'changes must be an object (a JSON merge patch for the payload)' }),
  }),
  group: z.strictObject({
    type: z.literal('group'),
    group_by: z.array(Name).min(1),
    // Required by the spec (the reference defaults it to 30 s): docs/compatibility.md.
    group_wait_seconds: durationSeconds(MAX_WAIT_SECONDS, 0),
    group_interval_seconds: WaitSeconds.default(300),
    repeat_interval_seconds: WaitSeconds.optional(),
    max_group_size: boundedCount(MAX_GROUP_SIZE).default(100),
  }),
  state_machine: z.strictObject({ type: z.literal('state_machine'), state_machine: Name, fingerprint_fields: z.array(Name).optional() }),
  require_approval: z.strictObject({
    type: z.literal('require_approval'),
    message: z.string().max(4096).optional(),
    // The reference implementation defaults its approval timeout to one hour.
    ttl_seconds: WaitSeconds.default(3600),
    notify_provider: Name.optional(),
  }),
  chain: z.strictObject({ type: z.literal('chain'), chain_name: Name }),
  llm_guardrail: z.strictObject({
    type: z.literal('llm_guardrail'),
    evaluator_name: Name,
    block_on_flag: z.boolean().default(true),
    send_to: Name.optional(),
  }),
} satisfies { [K in RuleActionType]: z.ZodType<Extract<RuleAction, { type: K }>, unknown> };

export const RULE_ACTION_TYPES = Object.keys(ACTION_SCHEMAS) as RuleActionType[];

/** Accepted spellings of the reference implementation / docs, rewritten to the canonical form. */
const TYPE_ALIASES: Readonly<Record<string, RuleActionType>> = { request_approval: 'require_approval' };
const FIELD_ALIASES: Partial<Record<RuleActionType, Record<string, string>>> = {
  require_approval: { timeout_seconds: 'ttl_seconds' },
  chain: { chain: 'chain_name' },
};

function isActionType(name: string): name is RuleActionType {
  return Object.hasOwn(ACTION_SCHEMAS, name);
}

/** Validates a rule action (`action:` of a rule), applying aliases and defaults. */
export function compileAction(raw: unknown, path: string, issues: IssueList): RuleAction | null {
  if (!isPlainObject(raw)) {
    issues.add(path, `action must be a mapping with a type, got ${describeValue(raw)}`);
    return null;
  }
  const rawType = raw['type'];
  const type = typeof rawType === 'string' ? (TYPE_ALIASES[rawType] ?? rawType) : undefined;
  if (type === undefined || !isActionType(type)) {
    const got = rawType === undefined ? 'none' : describeValue(rawType);
    issues.add(joinPath(path, 'type'), `unknown action type (expected one of ${RULE_ACTION_TYPES.join(', ')}); got ${got}`);
    return null;
  }
  const canonical: Record<string, unknown> = { ...raw, type };
  /** Canonical field → the alias the definition used, so a problem is reported under the name written. */
  const written: Record<string, string> = {};
  for (const [alias, name] of Object.entries(FIELD_ALIASES[type] ?? {})) {
    if (!Object.hasOwn(canonical, alias)) continue;
    if (Object.hasOwn(canonical, name)) {
      issues.add(joinPath(path, alias), `${alias} is an alias of ${name}; give only one of them`);
      return null;
    }
    canonical[name] = canonical[alias];
    delete canonical[alias];
    written[name] = alias;
  }
  if (nestsDeeperThan(canonical, MAX_VALUE_DEPTH)) {
    issues.add(path, `the action nests deeper than ${MAX_VALUE_DEPTH} levels`);
    return null;
  }
  const parsed = ACTION_SCHEMAS[type].safeParse(canonical);
  if (!parsed.success) {
    issues.addZod(
      path,
      parsed.error.issues.map((issue) => {
        const [first, ...rest] = issue.path;
        const alias = typeof first === 'string' ? written[first] : undefined;
        return alias === undefined ? issue : { ...issue, path: [alias, ...rest] };
      }),
    );
    return null;
  }
  // A private copy (zod keeps nested values such as `changes` by reference); rules freeze it.
  return cloneJson(parsed.data);
}
