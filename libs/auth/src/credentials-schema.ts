import { z } from 'zod';
import { hashApiKey, derivedKeyName } from './api-key-hash.js';
import { passwordHashProblem } from './password-hash.js';
import { parseRole, type Role } from './roles.js';

/**
 * The credentials file, validated strictly (unknown keys are errors). Entries come out normalised:
 * roles lower-cased, `providers` defaulted, older-form keys hashed and given a grant and a name.
 */

const MIN_JWT_SECRET = 32;
const MAX_EXPIRY_SECONDS = 31 * 24 * 3600;

const pattern = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(256)
  .refine((s) => s === '*' || !s.includes('*'), 'use "*" alone or a name without "*" (a tenant covers its children)');

const patterns = z.array(pattern).min(1, 'needs at least one entry (use "*" for any)');

export const GrantSchema = z.strictObject({
  tenants: patterns,
  namespaces: patterns,
  providers: patterns.default(['*']),
  actions: patterns,
});

const RoleSchema = z.string().transform((text, ctx): Role => {
  const role = parseRole(text);
  if (role) return role;
  ctx.addIssue({ code: 'custom', message: `unknown role "${text.slice(0, 32)}" (expected admin, operator or viewer)` });
  return z.NEVER;
});

const SettingsSchema = z.strictObject({
  jwt_secret: z.string().min(MIN_JWT_SECRET, `must be at least ${MIN_JWT_SECRET} characters`),
  jwt_expiry_seconds: z.number().int().positive().max(MAX_EXPIRY_SECONDS).default(3600),
});

const UserSchema = z.strictObject({
  username: z.string().trim().min(1, 'must not be empty').max(256),
  password_hash: z.string().superRefine((hash, ctx) => {
    const problem = passwordHashProblem(hash);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
  role: RoleSchema,
  grants: z.array(GrantSchema).default([]),
});

const HashedKeySchema = z
  .strictObject({
    name: z.string().trim().min(1, 'must not be empty').max(256),
    key_hash: z
      .string()
      .trim()
      .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (the SHA-256 of the raw key)')
      .transform((h) => h.toLowerCase()),
    role: RoleSchema,
    grants: z.array(GrantSchema).default([]),
  })
  .transform((k) => ({ name: k.name, keyHash: k.key_hash, role: k.role, grants: k.grants, legacy: false, rawKeyLength: null as number | null }));

/** The older form `{key, role, tenant, description}`: raw key, one hierarchical tenant, everything else `*`. */
const LegacyKeySchema = z
  .strictObject({
    key: z.string().min(1, 'must not be empty'),
    role: RoleSchema,
    tenant: pattern,
    description: z.string().trim().min(1).max(256).optional(),
  })
  .transform((k) => {
    const keyHash = hashApiKey(k.key);
    const grant = { tenants: [k.tenant], namespaces: ['*'], providers: ['*'], actions: ['*'] };
    return {
      name: k.description ?? derivedKeyName(keyHash),
      keyHash,
      role: k.role,
      grants: [grant],
      legacy: true,
      rawKeyLength: k.key.length as number | null,
    };
  });

// Picks the form by the presence of `key`, so errors speak about the form the author meant.
const ApiKeySchema = z.unknown().transform((entry, ctx) => {
  const legacy = entry !== null && typeof entry === 'object' && 'key' in entry;
  const result = legacy ? LegacyKeySchema.safeParse(entry) : HashedKeySchema.safeParse(entry);
  if (result.success) return result.data;
  for (const issue of result.error.issues) ctx.addIssue({ ...issue });
  return z.NEVER;
});

export const CredentialsFileSchema = z
  .strictObject({
    settings: SettingsSchema,
    users: z
      .array(UserSchema)
      .nullable()
      .default([])
      .transform((u) => u ?? []),
    api_keys: z
      .array(ApiKeySchema)
      .nullable()
      .default([])
      .transform((k) => k ?? []),
  })
  .superRefine((file, ctx) => {
    flagDuplicates(file.users, (u) => u.username, 'username', 'users', ctx);
    flagDuplicates(file.api_keys, (k) => k.name, 'name', 'api_keys', ctx);
    // A key (or its hash) is a secret: the message names the entries, not the value.
    flagDuplicates(file.api_keys, (k) => k.keyHash, 'key', 'api_keys', ctx, { echo: false });
    // The name is the caller id (rate limits, caller overrides, audit): one name, one caller.
    const userAt = new Map(file.users.map((u, i) => [u.username, i]));
    file.api_keys.forEach((k, i) => {
      const user = userAt.get(k.name);
      if (user !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['api_keys', i, 'name'],
          message: `name "${k.name}" is also a username (users.${user}): a caller id names one caller`,
        });
    });
  });

function flagDuplicates<T>(
  list: T[],
  keyOf: (item: T) => string,
  what: string,
  section: string,
  ctx: z.RefinementCtx,
  opts: { echo: boolean } = { echo: true },
): void {
  const firstIndex = new Map<string, number>();
  list.forEach((item, i) => {
    const k = keyOf(item);
    const first = firstIndex.get(k);
    if (first === undefined) firstIndex.set(k, i);
    else {
      const shown = opts.echo ? ` "${k}"` : '';
      ctx.addIssue({ code: 'custom', path: [section, i], message: `duplicate ${what}${shown} (same as ${section}.${first})` });
    }
  });
}
