import { ManualClock } from '@sluice/core';
import { MemoryStateStore } from '@sluice/state';
import { beforeAll, describe, expect, it } from 'vitest';
import { argon2Phc, credentialsYaml, scryptPhc } from '../test/auth-fixtures.js';
import { hashApiKey } from './api-key-hash.js';
import { Authenticator } from './authenticator.js';
import type { Caller } from './caller.js';
import { parseCredentials, type Credentials } from './credentials.js';
import { RevocationList } from './revocation-list.js';
import { TokenService } from './token-service.js';
import { rejection } from '../test/rejection.js';

const API_KEY = 'sk-live-0123456789abcdef';
const DOTTED_KEY = 'abc.def.ghi'; // JWT-shaped, but an API key
const GRANT = { tenants: ['acme'], namespaces: ['*'], providers: ['*'], actions: ['*'] };

let yamlUsers = '';
beforeAll(async () => {
  yamlUsers = `${[
    `  - { username: alice, password_hash: '${await argon2Phc('alice-pw')}', role: admin, grants: [{ tenants: [acme], namespaces: ['*'], actions: ['*'] }] }`,
    `  - { username: bob, password_hash: '${scryptPhc('bob-pw')}', role: viewer }`,
  ].join('\n')}\n`;
});

function credentials(users = yamlUsers): Credentials {
  const apiKeys = `${[
    `  - { name: ci, key_hash: ${hashApiKey(API_KEY)}, role: operator, grants: [{ tenants: [acme], namespaces: ['*'], actions: ['*'] }] }`,
    `  - { name: dotted, key_hash: ${hashApiKey(DOTTED_KEY)}, role: viewer }`,
  ].join('\n')}\n`;
  return parseCredentials(credentialsYaml({ users, api_keys: apiKeys }), 'test', undefined).credentials;
}

function setup() {
  const clock = new ManualClock(Date.now());
  const holder = { current: credentials() };
  const tokens = new TokenService(holder.current.jwtSecret, { clock, expirySeconds: () => holder.current.jwtExpirySeconds });
  const revocations = new RevocationList(new MemoryStateStore({ clock }), clock);
  return { clock, holder, auth: new Authenticator({ credentials: holder, tokens, revocations }) };
}

const MALFORMED = 'malformed Authorization header: expected "Bearer <token or API key>" or "Basic" with the API key as the password';

describe('Authenticator.authenticate', () => {
  it('accepts a Bearer JWT from login (any case of "bearer")', async () => {
    const { auth, clock } = setup();
    const { token, expires_in } = await auth.login('alice', 'alice-pw');
    expect(expires_in).toBe(3600);
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const caller = await auth.authenticate({ authorization: `${scheme} ${token}` });
      expect(caller).toMatchObject({ id: 'alice', role: 'admin', method: 'jwt', grants: [GRANT] });
      expect(caller.jti).toMatch(/^[0-9a-f-]{36}$/);
      expect(caller.tokenExpiresAt).toBe(Math.floor(clock.now() / 1000) * 1000 + 3_600_000);
    }
  });

  it('accepts an API key as the password of Basic (Prometheus basic_auth), whatever the user name', async () => {
    const { auth } = setup();
    for (const user of ['prometheus', '']) {
      const caller = await auth.authenticate({ authorization: `Basic ${Buffer.from(`${user}:${API_KEY}`).toString('base64')}` });
      expect(caller).toMatchObject({ id: 'ci', method: 'api_key' });
    }
  });

  it('accepts an API key as Bearer, as X-API-Key, and a JWT-shaped key after the JWT attempt fails', async () => {
    const { auth } = setup();
    const expected: Partial<Caller> = { id: 'ci', role: 'operator', method: 'api_key', grants: [GRANT] };
    expect(await auth.authenticate({ authorization: `Bearer ${API_KEY}` })).toMatchObject(expected);
    expect(await auth.authenticate({ 'x-api-key': API_KEY })).toMatchObject(expected);
    expect(await auth.authenticate({ 'x-api-key': [API_KEY] })).toMatchObject(expected);
    expect(await auth.authenticate({ authorization: `Bearer ${DOTTED_KEY}` })).toMatchObject({ id: 'dotted', method: 'api_key' });
  });

  it('prefers Authorization over X-API-Key', async () => {
    const { auth } = setup();
    const err = await rejection(auth.authenticate({ authorization: 'Bearer wrong-key', 'x-api-key': API_KEY }));
    expect(err.message).toBe('invalid API key');
  });

  it.each<[string, Parameters<Authenticator['authenticate']>[0], string]>([
    ['no headers', {}, 'missing authentication credentials'],
    ['unknown X-API-Key', { 'x-api-key': 'nope-nope-nope' }, 'invalid API key'],
    ['unknown Bearer key', { authorization: 'Bearer nope-nope-nope' }, 'invalid API key'],
    ['JWT-shaped unknown Bearer', { authorization: 'Bearer aaaa.bbbb.cccc' }, 'invalid token: malformed'],
    ['Basic with an unknown key as password', { authorization: `Basic ${Buffer.from('prometheus:nope-nope-nope').toString('base64')}` }, 'invalid API key'],
    ['Basic without a password', { authorization: `Basic ${Buffer.from('prometheus').toString('base64')}` }, MALFORMED],
    ['another scheme', { authorization: 'Digest abc' }, MALFORMED],
    ['Bearer without a value', { authorization: 'Bearer' }, MALFORMED],
    ['Bearer with two values', { authorization: `Bearer ${API_KEY} extra` }, MALFORMED],
    ['empty Authorization', { authorization: '  ' }, 'empty Authorization header'],
    ['empty X-API-Key', { 'x-api-key': '' }, 'empty X-API-Key header'],
    ['two Authorization headers', { authorization: [`Bearer ${API_KEY}`, `Bearer ${API_KEY}`] }, 'multiple Authorization headers'],
    ['two X-API-Key headers', { 'x-api-key': [API_KEY, API_KEY] }, 'multiple X-API-Key headers'],
    ['oversized Authorization', { authorization: `Bearer ${'k'.repeat(9000)}` }, 'Authorization header is too long'],
    ['oversized X-API-Key', { 'x-api-key': 'k'.repeat(9000) }, 'X-API-Key header is too long'],
  ])('401 for %s', async (_name, headers, message) => {
    const { auth } = setup();
    const err = await rejection(auth.authenticate(headers));
    expect(err.statusCode).toBe(401);
    expect(err.message).toBe(message);
    expect(err.message).not.toContain(API_KEY);
  });

  it('gives the JWT reason for an expired token', async () => {
    const { auth, clock } = setup();
    const { token } = await auth.login('bob', 'bob-pw');
    clock.advance(3_700_000);
    expect((await rejection(auth.authenticate({ authorization: `Bearer ${token}` }))).message).toBe('invalid token: expired');
  });

  it('applies reloaded users to live tokens: a removed user is refused, a changed role applies', async () => {
    const { auth, holder } = setup();
    const alice = (await auth.login('alice', 'alice-pw')).token;
    const bob = (await auth.login('bob', 'bob-pw')).token;
    // Bob's entry as it was (same password hash), with another role.
    const bobsLine = yamlUsers.split('\n').find((line) => line.includes('username: bob')) ?? '';
    holder.current = credentials(`${bobsLine.replace('role: viewer', 'role: operator')}\n`);
    expect((await rejection(auth.authenticate({ authorization: `Bearer ${alice}` }))).message).toBe('invalid token: unknown user');
    expect(await auth.authenticate({ authorization: `Bearer ${bob}` })).toMatchObject({ id: 'bob', role: 'operator' });
  });

  it('ends the tokens of a user whose password changed, or who was removed and created again', async () => {
    const { auth, holder } = setup();
    const bob = (await auth.login('bob', 'bob-pw')).token;
    const original = holder.current;
    // The same password hashed again has a new salt: the stored hash changed, as after a reset.
    holder.current = credentials(`  - { username: bob, password_hash: '${scryptPhc('bob-pw')}', role: viewer }\n`);
    expect((await rejection(auth.authenticate({ authorization: `Bearer ${bob}` }))).message).toBe('invalid token: the password changed since it was issued');
    // Removed, then back with the hash it had: the token's credential again.
    holder.current = credentials('');
    expect((await rejection(auth.authenticate({ authorization: `Bearer ${bob}` }))).message).toBe('invalid token: unknown user');
    holder.current = original;
    expect(await auth.authenticate({ authorization: `Bearer ${bob}` })).toMatchObject({ id: 'bob' });
    // A new login under the new hash works.
    holder.current = credentials(`  - { username: bob, password_hash: '${scryptPhc('bob-pw')}', role: viewer }\n`);
    const fresh = (await auth.login('bob', 'bob-pw')).token;
    expect(await auth.authenticate({ authorization: `Bearer ${fresh}` })).toMatchObject({ id: 'bob' });
  });
});

describe('Authenticator.login', () => {
  it('issues tokens for argon2id and scrypt users', async () => {
    const { auth } = setup();
    expect((await auth.login('alice', 'alice-pw')).token.split('.')).toHaveLength(3);
    expect((await auth.login('bob', 'bob-pw')).expires_in).toBe(3600);
  });

  it.each([
    ['wrong password', 'alice', 'nope'],
    ['unknown user', 'mallory', 'alice-pw'],
    ['empty fields', '', ''],
    ['oversized password', 'alice', 'x'.repeat(5000)],
  ])('answers 401 invalid credentials for %s', async (_name, username, password) => {
    const { auth } = setup();
    const err = await rejection(auth.login(username, password));
    expect(err.statusCode).toBe(401);
    expect(err.message).toBe('invalid credentials');
  });

  it('still verifies a hash for unknown users when no users are configured', async () => {
    const { auth, holder } = setup();
    holder.current = credentials('  []\n');
    expect((await rejection(auth.login('alice', 'alice-pw'))).message).toBe('invalid credentials');
  });
});

describe('Authenticator.logout', () => {
  it('revokes the JWT so it is refused afterwards', async () => {
    const { auth } = setup();
    const { token } = await auth.login('alice', 'alice-pw');
    const caller = await auth.authenticate({ authorization: `Bearer ${token}` });
    await auth.logout(caller);
    const err = await rejection(auth.authenticate({ authorization: `Bearer ${token}` }));
    expect(err.statusCode).toBe(401);
    expect(err.message).toBe('token has been revoked');
    // Another token of the same user is unaffected.
    const again = (await auth.login('alice', 'alice-pw')).token;
    expect((await auth.authenticate({ authorization: `Bearer ${again}` })).id).toBe('alice');
  });

  it('needs a JWT caller', async () => {
    const { auth } = setup();
    const caller = await auth.authenticate({ 'x-api-key': API_KEY });
    const err = await rejection(auth.logout(caller));
    expect(err.statusCode).toBe(400);
    expect(err.message).toBe('logout needs a JWT');
  });
});
