import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { argon2Phc, credentialsYaml, JWT_SECRET, scryptPhc } from '../test/auth-fixtures.js';
import { hashApiKey } from './api-key-hash.js';
import { CredentialsError, parseCredentials } from './credentials.js';
import { encryptValue } from './encrypted-values.js';
import { verifyPassword } from './password-hash.js';

const RAW_KEY = 'sk-raw-key-that-must-never-leak-123';
const parse = (text: string, masterKey?: string) => parseCredentials(text, 'creds.yaml', masterKey);

function errorOf(text: string, masterKey?: string): string {
  try {
    parse(text, masterKey);
  } catch (err) {
    expect(err).toBeInstanceOf(CredentialsError);
    return (err as Error).message;
  }
  throw new Error('expected the file to be refused');
}

describe('parseCredentials: valid files', () => {
  it('reads settings, users (argon2id and scrypt) and both api key forms', async () => {
    const text = credentialsYaml({
      settings: `  jwt_secret: ${JWT_SECRET}\n  jwt_expiry_seconds: 600\n`,
      users: `${[
        `  - username: alice`,
        `    password_hash: '${await argon2Phc('alice-pw')}'`,
        `    role: Admin`,
        `    grants: [{ tenants: ['*'], namespaces: ['*'], actions: ['*'] }]`,
        `  - username: bob`,
        `    password_hash: '${scryptPhc('bob-pw')}'`,
        `    role: viewer`,
      ].join('\n')}\n`,
      api_keys: `${[
        `  - name: ci`,
        `    key_hash: ${hashApiKey('ci-key').toUpperCase()}`,
        `    role: OPERATOR`,
        `    grants: [{ tenants: [acme], namespaces: [billing], providers: [email], actions: [send] }]`,
        `  - key: ${RAW_KEY}`,
        `    role: operator`,
        `    tenant: acme.eu`,
        `    description: swarm-planner`,
        `  - key: another-raw-key-value-0001`,
        `    role: viewer`,
        `    tenant: globex`,
      ].join('\n')}\n`,
    });
    const { credentials, warnings } = parse(text);

    expect(credentials.jwtSecret).toBe(JWT_SECRET);
    expect(credentials.jwtExpirySeconds).toBe(600);

    const alice = credentials.users.get('alice');
    expect(alice?.role).toBe('admin');
    expect(alice?.grants).toEqual([{ tenants: ['*'], namespaces: ['*'], providers: ['*'], actions: ['*'] }]);
    expect(await verifyPassword(alice?.passwordHash ?? '', 'alice-pw')).toBe(true);
    const bob = credentials.users.get('bob');
    expect(bob?.grants).toEqual([]);
    expect(await verifyPassword(bob?.passwordHash ?? '', 'bob-pw')).toBe(true);

    expect(credentials.apiKeys.get(hashApiKey('ci-key'))).toEqual({
      name: 'ci',
      keyHash: hashApiKey('ci-key'),
      role: 'operator',
      grants: [{ tenants: ['acme'], namespaces: ['billing'], providers: ['email'], actions: ['send'] }],
    });
    expect(credentials.apiKeys.get(hashApiKey(RAW_KEY))).toEqual({
      name: 'swarm-planner',
      keyHash: hashApiKey(RAW_KEY),
      role: 'operator',
      grants: [{ tenants: ['acme.eu'], namespaces: ['*'], providers: ['*'], actions: ['*'] }],
    });
    const derived = hashApiKey('another-raw-key-value-0001');
    expect(credentials.apiKeys.get(derived)?.name).toBe(`key-${derived.slice(0, 8)}`);

    // The raw key is hashed at load and kept nowhere.
    const dump = JSON.stringify({ users: [...credentials.users.values()], keys: [...credentials.apiKeys.values()], warnings });
    expect(dump).not.toContain(RAW_KEY);
    expect(warnings.filter((w) => w.includes('older raw "key" form'))).toHaveLength(2);
  });

  it('defaults jwt_expiry_seconds and accepts empty or null sections', () => {
    const { credentials } = parse(`settings:\n  jwt_secret: ${JWT_SECRET}\nusers:\napi_keys: []\n`);
    expect(credentials.jwtExpirySeconds).toBe(3600);
    expect(credentials.users.size).toBe(0);
  });

  it('warns about short raw keys in the older form', () => {
    const { warnings } = parse(credentialsYaml({ api_keys: '  - { key: short, role: admin, tenant: acme }\n' }));
    expect(warnings.some((w) => w.includes('shorter than 16'))).toBe(true);
  });
});

describe('parseCredentials: ENC values', () => {
  const key = randomBytes(32);
  const keyText = key.toString('hex');

  it('decrypts any string with SLUICE_AUTH_KEY', async () => {
    const enc = (s: string) => encryptValue(s, key);
    const text = credentialsYaml({
      settings: `  jwt_secret: '${enc(JWT_SECRET)}'\n`,
      users: `  - { username: alice, password_hash: '${enc(await argon2Phc('pw'))}', role: admin }\n`,
      api_keys: `${[
        `  - { name: ci, key_hash: '${enc(hashApiKey('ci-key'))}', role: admin }`,
        `  - { key: '${enc(RAW_KEY)}', role: viewer, tenant: acme }`,
      ].join('\n')}\n`,
    });
    const { credentials } = parse(text, keyText);
    expect(credentials.jwtSecret).toBe(JWT_SECRET);
    expect(await verifyPassword(credentials.users.get('alice')?.passwordHash ?? '', 'pw')).toBe(true);
    expect(credentials.apiKeys.has(hashApiKey('ci-key'))).toBe(true);
    expect(credentials.apiKeys.has(hashApiKey(RAW_KEY))).toBe(true);
  });

  it('names the path when the key is missing, wrong or malformed', () => {
    const text = credentialsYaml({ settings: `  jwt_secret: '${encryptValue(JWT_SECRET, key)}'\n` });
    expect(errorOf(text)).toMatch(/settings\.jwt_secret: cannot decrypt ENC\[\.\.\.\] value: SLUICE_AUTH_KEY is not set/);
    expect(errorOf(text, randomBytes(32).toString('hex'))).toMatch(/settings\.jwt_secret: cannot decrypt ENC\[\.\.\.\] value: wrong SLUICE_AUTH_KEY/);
    expect(errorOf(text, 'not-a-key')).toMatch(/settings\.jwt_secret: .*must be 64 hex characters/);
    expect(errorOf(credentialsYaml({ settings: `  jwt_secret: 'ENC[AES256-GCM,oops]'\n` }), keyText)).toMatch(/settings\.jwt_secret: malformed ENC/);
  });

  it('does not need SLUICE_AUTH_KEY when nothing is encrypted', () => {
    expect(() => parse(credentialsYaml(), undefined)).not.toThrow();
  });
});

describe('parseCredentials: broken files name the path', () => {
  const hash = hashApiKey('k');
  it.each<[string, string, RegExp]>([
    [
      'unknown role',
      credentialsYaml({ api_keys: `  - { name: a, key_hash: ${hash}, role: root }\n` }),
      /api_keys\.0\.role: unknown role "root" \(expected admin, operator or viewer\)/,
    ],
    [
      'unknown user role',
      credentialsYaml({ users: `  - { username: u, password_hash: '${scryptPhc('p')}', role: superuser }\n` }),
      /users\.0\.role: unknown role "superuser"/,
    ],
    ['unknown key', credentialsYaml({ api_keys: `  - { name: a, key_hash: ${hash}, role: admin, extra: 1 }\n` }), /api_keys\.0\.extra: unknown key/],
    [
      'unknown grant key',
      credentialsYaml({ api_keys: `  - { name: a, key_hash: ${hash}, role: admin, grants: [{ tenants: [a], namespaces: [b], actions: [c], agent: x }] }\n` }),
      /api_keys\.0\.grants\.0\.agent: unknown key/,
    ],
    ['unknown top-level key', `${credentialsYaml()}extras: 1\n`, /extras: unknown key/],
    ['missing settings', 'users: []\n', /settings: required/],
    ['missing jwt_secret', 'settings:\n  jwt_expiry_seconds: 60\n', /settings\.jwt_secret: required/],
    ['short jwt_secret', 'settings:\n  jwt_secret: short\n', /settings\.jwt_secret: must be at least 32 characters/],
    ['bad expiry', credentialsYaml({ settings: `  jwt_secret: ${JWT_SECRET}\n  jwt_expiry_seconds: -5\n` }), /settings\.jwt_expiry_seconds:/],
    ['bad key_hash', credentialsYaml({ api_keys: '  - { name: a, key_hash: abc, role: admin }\n' }), /api_keys\.0\.key_hash: must be 64 hex characters/],
    ['missing name', credentialsYaml({ api_keys: `  - { key_hash: ${hash}, role: admin }\n` }), /api_keys\.0\.name: required/],
    ['legacy without tenant', credentialsYaml({ api_keys: '  - { key: abcdefghijklmnopq, role: admin }\n' }), /api_keys\.0\.tenant: required/],
    [
      'empty tenants',
      credentialsYaml({ api_keys: `  - { name: a, key_hash: ${hash}, role: admin, grants: [{ tenants: [], namespaces: ['*'], actions: ['*'] }] }\n` }),
      /api_keys\.0\.grants\.0\.tenants: needs at least one entry/,
    ],
    [
      'glob tenant',
      credentialsYaml({ api_keys: `  - { name: a, key_hash: ${hash}, role: admin, grants: [{ tenants: ['acme.*'], namespaces: ['*'], actions: ['*'] }] }\n` }),
      /grants\.0\.tenants\.0: use "\*" alone/,
    ],
    [
      'bad password hash',
      credentialsYaml({ users: '  - { username: u, password_hash: plain, role: admin }\n' }),
      /users\.0\.password_hash: unsupported password hash/,
    ],
    [
      'duplicate username',
      credentialsYaml({
        users: `  - { username: u, password_hash: '${scryptPhc('p')}', role: admin }\n  - { username: u, password_hash: '${scryptPhc('q')}', role: admin }\n`,
      }),
      /users\.1: duplicate username "u" \(same as users\.0\)/,
    ],
    [
      'duplicate key',
      credentialsYaml({ api_keys: `  - { name: a, key_hash: ${hash}, role: admin }\n  - { name: b, key_hash: ${hash}, role: admin }\n` }),
      /api_keys\.1: duplicate key \(same as api_keys\.0\)/,
    ],
    [
      'a key named as a user',
      credentialsYaml({
        users: `  - { username: ops, password_hash: '${scryptPhc('p')}', role: viewer }\n`,
        api_keys: `  - { name: ops, key_hash: ${hash}, role: admin }\n`,
      }),
      /api_keys\.0\.name: name "ops" is also a username \(users\.0\): a caller id names one caller/,
    ],
    ['empty file', '', /the file is empty/],
    ['top-level list', '- a\n', /the top level must be a mapping/],
  ])('%s', (_name, text, message) => {
    const err = errorOf(text);
    expect(err).toMatch(/^invalid credentials file \(creds\.yaml\):\n {2}- /);
    expect(err).toMatch(message);
  });

  it('reports bad YAML by position without quoting the line (it may hold a secret)', () => {
    const err = errorOf(`settings:\n  jwt_secret: "${JWT_SECRET}\n  : [\n`);
    expect(err).toMatch(/not valid YAML \(\w+\) at line \d+, column \d+/);
    expect(err).not.toContain(JWT_SECRET);
  });

  it('never echoes a raw key or hash', () => {
    const err = errorOf(credentialsYaml({ api_keys: `  - { key: ${RAW_KEY}, role: admin, tenant: a }\n  - { key: ${RAW_KEY}, role: admin, tenant: b }\n` }));
    expect(err).toMatch(/duplicate key/);
    expect(err).not.toContain(RAW_KEY);
    expect(err).not.toContain(hashApiKey(RAW_KEY));
  });
});
