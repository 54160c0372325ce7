import type { StateKey } from './state-store.js';

/**
 * The one place keys are rendered. Format: `<prefix>:<kind>:{<namespace>:<tenant>}:<id>`.
 * The braces are a Redis Cluster hash tag: every key of one namespace+tenant lives in one slot,
 * so multi-key scripts within a tenant also run on Redis Cluster. Components are escaped so a
 * `:`, `{`, `}` or `%` inside a name can neither fake another scope nor break the hash tag.
 */
const NEEDS_ESCAPE = /[%:{}]/;

export function escapeComponent(part: string): string {
  // Most names need no escaping: test first, it is far cheaper than replace with a callback.
  if (!NEEDS_ESCAPE.test(part)) return part;
  return part.replace(/[%:{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

function unescapeComponent(part: string): string {
  return part.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The last rendering of each shared key (shareKey), with the prefix it was rendered under. */
const sharedRenderings = new WeakMap<StateKey, { prefix: string; rendered: string } | null>();

/**
 * Marks a key that its caller reuses across many writes (the audit trail's index keys, one
 * object per record shape): it is frozen, and rendered once per prefix instead of on every write.
 * A fresh rendering is a new string that a map lookup must flatten and hash again.
 */
export function shareKey(key: StateKey): StateKey {
  sharedRenderings.set(Object.freeze(key), null);
  return key;
}

export function renderKey(prefix: string, key: StateKey): string {
  const shared = sharedRenderings.get(key);
  if (shared?.prefix === prefix) return shared.rendered;
  const rendered = `${prefix}:${escapeComponent(key.kind)}:{${escapeComponent(key.namespace)}:${escapeComponent(key.tenant)}}:${escapeComponent(key.id)}`;
  if (shared !== undefined) sharedRenderings.set(key, { prefix, rendered });
  return rendered;
}

/** Glob pattern matching every key of a kind, optionally narrowed to a namespace and tenant. */
export function renderKindPattern(prefix: string, kind: string, scope: { namespace?: string; tenant?: string } = {}): string {
  const ns = scope.namespace === undefined ? '*' : globEscape(escapeComponent(scope.namespace));
  const tenant = scope.tenant === undefined ? '*' : globEscape(escapeComponent(scope.tenant));
  return `${globEscape(prefix)}:${globEscape(escapeComponent(kind))}:{${ns}:${tenant}}:*`;
}

const KEY_RE = /^(.*):([^:{}]+):\{([^:{}]*):([^:{}]*)\}:(.*)$/;

/** Inverse of renderKey for keys produced with the same prefix; null for foreign keys. */
export function parseKey(prefix: string, rendered: string): StateKey | null {
  if (!rendered.startsWith(`${prefix}:`)) return null;
  const m = KEY_RE.exec(rendered);
  if (!m || m[1] !== prefix) return null;
  return {
    kind: unescapeComponent(m[2] ?? ''),
    namespace: unescapeComponent(m[3] ?? ''),
    tenant: unescapeComponent(m[4] ?? ''),
    id: unescapeComponent(m[5] ?? ''),
  };
}

/** Global (not tenant-scoped) keys use this scope, e.g. config generations. */
export const GLOBAL_SCOPE = { namespace: '_', tenant: '_' } as const;

export function channelName(prefix: string, name: string): string {
  return `${prefix}:chan:${name}`;
}

function globEscape(s: string): string {
  return s.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
