import { createHash } from 'node:crypto';
import type { Action } from '@sluice/core';

/**
 * Event fingerprints. An action's own `fingerprint` wins; otherwise the rule's
 * `fingerprint_fields` are hashed as the reference does: SHA-256 (hex) over
 * `<field>=<value>;` for each field in order, a missing field counting as the empty string.
 * Paths are written without the `action.` prefix (`payload.host`, `metadata.cluster`); a
 * prefixed path is read, and hashed, as the bare one so both spellings name one event.
 */
export function fingerprintOf(action: Action, fields: readonly string[] | undefined): string | undefined {
  if (action.fingerprint !== undefined && action.fingerprint !== '') return action.fingerprint;
  if (!fields || fields.length === 0) return undefined;
  return deriveFingerprint(action, fields);
}

export function deriveFingerprint(action: Action, fields: readonly string[]): string {
  const hash = createHash('sha256');
  for (const raw of fields) {
    const field = raw.startsWith('action.') ? raw.slice('action.'.length) : raw;
    hash.update(`${field}=${fieldText(action, field)};`);
  }
  return hash.digest('hex');
}

const SCALARS = ['namespace', 'tenant', 'provider', 'action_type', 'id', 'status', 'dedup_key', 'fingerprint'] as const;
type Scalar = (typeof SCALARS)[number];

/** The value at a path as hashed text: strings as they are, other scalars as JSON, absent or null as "". */
function fieldText(action: Action, field: string): string {
  if ((SCALARS as readonly string[]).includes(field)) return action[field as Scalar] ?? '';
  const [root, ...rest] = field.split('.');
  if (rest.length === 0) return '';
  if (root === 'payload') return text(walk(action.payload, rest));
  if (root === 'metadata') {
    const direct = walk(action.metadata, rest);
    // `metadata.<key>` also reads a label, as the reference (whose metadata is the labels map) does.
    return text(direct !== undefined ? direct : walk(action.metadata.labels, rest));
  }
  return '';
}

function walk(root: unknown, segments: readonly string[]): unknown {
  let current = root;
  for (const segment of segments) {
    if (Array.isArray(current)) current = /^(0|[1-9]\d*)$/.test(segment) ? current[Number(segment)] : undefined;
    else if (typeof current === 'object' && current !== null && Object.hasOwn(current, segment)) current = (current as Record<string, unknown>)[segment];
    else return undefined;
  }
  return current;
}

function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
