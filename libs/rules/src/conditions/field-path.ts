import type { EvalInput } from '../types.js';

/** A field reader: returns the value at the path, or `undefined` when the field is absent. */
type FieldReader = (input: EvalInput) => unknown;

/** The `action.<field>` names that hold a scalar (payload and metadata are handled as trees). */
const ACTION_SCALAR_FIELDS = ['namespace', 'tenant', 'provider', 'action_type', 'id', 'dedup_key', 'status', 'fingerprint'] as const;
type ActionScalarField = (typeof ACTION_SCALAR_FIELDS)[number];

const MAX_FIELD_PATH_LENGTH = 512;

/** A pre-split path segment: the key, and its array index when the segment is numeric (else -1). */
interface Segment {
  readonly key: string;
  readonly index: number;
}

export type FieldPathResult = { ok: true; read: FieldReader } | { ok: false; message: string };

/**
 * Compiles a field path (`action.tenant`, `action.payload.items.0.sku`, `action.metadata.env`,
 * `state.current`) into a reader. Splitting and index parsing happen once, here.
 */
export function compileFieldPath(path: string): FieldPathResult {
  if (path.length === 0) return { ok: false, message: 'field path is empty' };
  if (path.length > MAX_FIELD_PATH_LENGTH) return { ok: false, message: `field path is longer than ${MAX_FIELD_PATH_LENGTH} characters` };
  const parts = path.split('.');
  if (parts.some((p) => p === '')) return { ok: false, message: `field path "${path}" has an empty segment` };
  const [root, second, ...rest] = parts;
  if (root === 'state') {
    if (second === undefined) return { ok: false, message: 'field path "state" needs a key, e.g. state.current' };
    const segments = toSegments([second, ...rest]);
    return { ok: true, read: (input) => walk(input.state, segments) };
  }
  if (root !== 'action') {
    return { ok: false, message: `unknown field path root "${root}" in "${path}" (expected action.<field> or state.<key>)` };
  }
  if (second === 'payload' || second === 'metadata') {
    const segments = toSegments(rest);
    return { ok: true, read: second === 'payload' ? (input) => walk(input.action.payload, segments) : (input) => walk(input.action.metadata, segments) };
  }
  if (isActionScalarField(second)) {
    if (rest.length > 0) return { ok: false, message: `action.${second} has no sub-fields (in "${path}")` };
    return { ok: true, read: actionFieldReader(second) };
  }
  const expected = [...ACTION_SCALAR_FIELDS, 'payload.<path>', 'metadata.<key>'].join(', ');
  return { ok: false, message: `unknown action field "${second ?? ''}" in "${path}" (expected one of ${expected})` };
}

function isActionScalarField(name: string | undefined): name is ActionScalarField {
  return (ACTION_SCALAR_FIELDS as readonly string[]).includes(name ?? '');
}

/** One closure per field with a literal property read: keeps the hot path monomorphic. */
function actionFieldReader(field: ActionScalarField): FieldReader {
  switch (field) {
    case 'namespace':
      return (input) => input.action.namespace;
    case 'tenant':
      return (input) => input.action.tenant;
    case 'provider':
      return (input) => input.action.provider;
    case 'action_type':
      return (input) => input.action.action_type;
    case 'id':
      return (input) => input.action.id;
    case 'dedup_key':
      return (input) => input.action.dedup_key;
    case 'status':
      return (input) => input.action.status;
    case 'fingerprint':
      return (input) => input.action.fingerprint;
  }
}

function toSegments(parts: readonly string[]): Segment[] {
  return parts.map((key) => ({ key, index: /^(0|[1-9]\d{0,8})$/.test(key) ? Number(key) : -1 }));
}

/** Follows the segments through objects (own keys only) and arrays (numeric segments). */
function walk(root: unknown, segments: readonly Segment[]): unknown {
  let current = root;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (Array.isArray(current)) {
      current = segment.index >= 0 ? current[segment.index] : undefined;
    } else if (typeof current === 'object' && current !== null) {
      current = Object.hasOwn(current, segment.key) ? (current as Record<string, unknown>)[segment.key] : undefined;
    } else {
      return undefined;
    }
  }
  return current;
}
