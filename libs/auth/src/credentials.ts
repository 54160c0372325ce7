import { parse as parseYaml, YAMLError } from 'yaml';
import type { z } from 'zod';
import { CredentialsFileSchema } from './credentials-schema.js';
import { decryptTree } from './decrypt-values.js';
import type { Grant } from './grants.js';
import type { Role } from './roles.js';

interface UserCredential {
  username: string;
  /** argon2id or scrypt PHC string. */
  passwordHash: string;
  role: Role;
  grants: Grant[];
}

interface ApiKeyCredential {
  /** The caller id of requests made with this key. */
  name: string;
  /** Lowercase hex SHA-256 of the raw key. */
  keyHash: string;
  role: Role;
  grants: Grant[];
}

/** One validated load of the credentials file. */
export interface Credentials {
  jwtSecret: string;
  jwtExpirySeconds: number;
  users: ReadonlyMap<string, UserCredential>;
  /** By keyHash. */
  apiKeys: ReadonlyMap<string, ApiKeyCredential>;
}

export interface ParsedCredentials {
  credentials: Credentials;
  /** Things worth a log line that do not make the file invalid. */
  warnings: string[];
}

/** A credentials file that cannot be used; the message names every offending path. */
export class CredentialsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialsError';
  }
}

const SHORT_RAW_KEY = 16;

/**
 * YAML text → Credentials. `ENC[...]` values anywhere are decrypted with `masterKey` (the text of
 * SLUICE_AUTH_KEY). Messages never contain a key, hash, password or secret.
 */
export function parseCredentials(text: string, source: string, masterKey: string | undefined): ParsedCredentials {
  const tree = readYaml(text, source);
  const decrypted = decryptTree(tree, masterKey);
  if (decrypted.issues.length > 0)
    invalid(
      source,
      decrypted.issues.map((i) => `${renderPath(i.path)}: ${i.message}`),
    );

  const result = CredentialsFileSchema.safeParse(decrypted.value);
  if (!result.success) invalid(source, result.error.issues.flatMap(describeIssue));
  const file = result.data;

  const warnings: string[] = [];
  const apiKeys = new Map<string, ApiKeyCredential>();
  file.api_keys.forEach((entry, i) => {
    if (entry.legacy) {
      warnings.push(`api_keys.${i} (${entry.name}) uses the older raw "key" form; prefer "key_hash" so the key is not stored`);
      if (entry.rawKeyLength !== null && entry.rawKeyLength < SHORT_RAW_KEY) {
        warnings.push(`api_keys.${i} (${entry.name}) has a key shorter than ${SHORT_RAW_KEY} characters`);
      }
    }
    apiKeys.set(entry.keyHash, { name: entry.name, keyHash: entry.keyHash, role: entry.role, grants: frozen(entry.grants) });
  });
  const users = new Map<string, UserCredential>();
  for (const u of file.users) users.set(u.username, { username: u.username, passwordHash: u.password_hash, role: u.role, grants: frozen(u.grants) });

  return {
    credentials: { jwtSecret: file.settings.jwt_secret, jwtExpirySeconds: file.settings.jwt_expiry_seconds, users, apiKeys },
    warnings,
  };
}

function invalid(source: string, lines: string[]): never {
  throw new CredentialsError(`invalid credentials file (${source}):\n${lines.map((l) => `  - ${l}`).join('\n')}`);
}

// Callers share these arrays across requests; freezing stops one handler from changing another's view.
function frozen(grants: Grant[]): Grant[] {
  for (const g of grants) {
    Object.freeze(g.tenants);
    Object.freeze(g.namespaces);
    Object.freeze(g.providers);
    Object.freeze(g.actions);
    Object.freeze(g);
  }
  return Object.freeze(grants) as Grant[];
}

function readYaml(text: string, source: string): Record<string, unknown> {
  const fail = (lines: string[]): never => invalid(source, lines);
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    // The yaml library's message quotes the offending source line, which may hold a secret.
    if (err instanceof YAMLError) {
      const at = err.linePos?.[0];
      return fail([`not valid YAML (${err.code})${at ? ` at line ${at.line}, column ${at.col}` : ''}`]);
    }
    return fail(['not valid YAML']);
  }
  if (doc === null || doc === undefined) return fail(['the file is empty (it needs at least settings.jwt_secret)']);
  if (typeof doc !== 'object' || Array.isArray(doc)) return fail(['the top level must be a mapping (settings, users, api_keys)']);
  return doc as Record<string, unknown>;
}

function describeIssue(issue: z.core.$ZodIssue): string[] {
  const at = renderPath(issue.path);
  if (issue.code === 'unrecognized_keys') return issue.keys.map((k) => `${at === '(root)' ? '' : `${at}.`}${k}: unknown key`);
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) return [`${at}: required`];
  return [`${at}: ${issue.message.replace(/^Invalid input: /, '')}`];
}

function renderPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map(String).join('.');
}
