import { createHash, randomBytes, scryptSync } from 'node:crypto';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';

export interface TestGrant {
  tenants: string[];
  namespaces: string[];
  providers?: string[];
  actions: string[];
}

export interface TestKey {
  name: string;
  role: 'admin' | 'operator' | 'viewer';
  grants: TestGrant[];
}

interface TestUser extends TestKey {
  password: string;
}

export interface CredentialsSpec {
  keys?: TestKey[];
  users?: TestUser[];
  jwtSecret?: string;
}

export const TEST_JWT_SECRET = 'test-jwt-secret-of-at-least-32-characters!';

export const WILDCARD_GRANT: TestGrant = { tenants: ['*'], namespaces: ['*'], actions: ['*'] };

/** The raw API key handed to a test caller: derived from its name, so tests can recompute it. */
export function rawKey(name: string): string {
  return `sk-test-${name}`;
}

/** A cheap scrypt PHC hash (tests only: ln=10 is far below a production cost). */
function scryptHash(password: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password, salt, 32, { N: 2 ** 10, r: 8, p: 1 });
  const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
  return `$scrypt$ln=10,r=8,p=1$${b64(salt)}$${b64(hash)}`;
}

function render(spec: CredentialsSpec): string {
  return stringify({
    settings: { jwt_secret: spec.jwtSecret ?? TEST_JWT_SECRET, jwt_expiry_seconds: 3600 },
    users: (spec.users ?? []).map((u) => ({ username: u.name, password_hash: scryptHash(u.password), role: u.role, grants: u.grants })),
    api_keys: (spec.keys ?? []).map((k) => ({
      name: k.name,
      key_hash: createHash('sha256').update(rawKey(k.name)).digest('hex'),
      role: k.role,
      grants: k.grants,
    })),
  });
}

/** A credentials file in a fresh temp directory; `rewrite` replaces it atomically (as editors and ConfigMaps do). */
export function credentialsFile(spec: CredentialsSpec): { file: string; rewrite(next: CredentialsSpec): void } {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-creds-')), 'credentials.yaml');
  const write = (next: CredentialsSpec) => {
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, render(next));
    renameSync(tmp, file);
  };
  write(spec);
  return { file, rewrite: write };
}

/** Request headers presenting a test key. */
export function keyHeader(name: string): Record<string, string> {
  return { authorization: `Bearer ${rawKey(name)}` };
}
