import { createHash } from 'node:crypto';
import type { Action } from '@sluice/core';

const SCALAR_FIELDS = ['namespace', 'tenant', 'provider', 'action_type', 'id', 'dedup_key', 'status', 'fingerprint'] as const;
type ScalarField = (typeof SCALAR_FIELDS)[number];

function isScalarField(name: string): name is ScalarField {
  return (SCALAR_FIELDS as readonly string[]).includes(name);
}

/**
 * Reads a group_by path. Paths are written without the `action.` prefix (`payload.cluster`,
 * `metadata.host`, `action_type`); the prefix is accepted too. `metadata.<key>` falls back to
 * `metadata.labels.<key>`, where the reference implementation reads it.
 */
export function readGroupField(action: Action, path: string): unknown {
  const parts = (path.startsWith('action.') ? path.slice('action.'.length) : path).split('.');
  const [root, ...rest] = parts;
  if (root === 'payload') return walk(action.payload, rest);
  if (root === 'metadata') {
    const direct = walk(action.metadata, rest);
    return direct === undefined && rest.length === 1 ? walk(action.metadata.labels, rest) : direct;
  }
  if (root !== undefined && isScalarField(root) && rest.length === 0) return action[root];
  return undefined;
}

function walk(root: unknown, segments: readonly string[]): unknown {
  let current = root;
  for (const segment of segments) {
    if (Array.isArray(current)) current = /^(0|[1-9]\d{0,8})$/.test(segment) ? current[Number(segment)] : undefined;
    else if (typeof current === 'object' && current !== null && Object.hasOwn(current, segment)) current = (current as Record<string, unknown>)[segment];
    else return undefined;
  }
  return current;
}

/** A label value as the reference renders it: strings as they are, other JSON as text; null and absent have none. */
function labelValue(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

export interface GroupIdentity {
  groupKey: string;
  /** group_by path → value, for the fields the action has. */
  labels: Record<string, string>;
}

/**
 * group_key = SHA-256 hex over namespace, tenant, rule name and the group_by values. The rule
 * name is part of it so two rules grouping by the same field never share a group (its wait,
 * size and provider are captured from the rule that created it). JSON framing keeps distinct
 * inputs distinct whatever characters names and values contain.
 */
export function groupIdentity(action: Action, rule: string, groupBy: readonly string[]): GroupIdentity {
  const labels: Record<string, string> = {};
  const values = groupBy.map((path) => {
    const value = labelValue(readGroupField(action, path));
    if (value !== undefined) labels[path] = value;
    return [path, value ?? null];
  });
  const groupKey = createHash('sha256')
    .update(JSON.stringify([action.namespace, action.tenant, rule, values]))
    .digest('hex');
  return { groupKey, labels };
}
