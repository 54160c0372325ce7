import { ManualClock } from '@sluice/core';
import { SignJWT, type JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import { JWT_SECRET } from '../test/auth-fixtures.js';
import type { Grant } from './grants.js';
import { MAX_TOKEN_LENGTH, TokenService } from './token-service.js';
import { rejection } from '../test/rejection.js';

const GRANTS: Grant[] = [{ tenants: ['acme'], namespaces: ['billing'], providers: ['*'], actions: ['*'] }];
const SUBJECT = { username: 'alice', role: 'operator' as const, grants: GRANTS, credential: 'fp' };
const key = new TextEncoder().encode(JWT_SECRET);

function service(clock = new ManualClock(), expiry = 3600) {
  return new TokenService(JWT_SECRET, { clock, expirySeconds: () => expiry });
}

/** Signs arbitrary claims with the real secret (for claim-shape tests). */
function signed(claims: JWTPayload, alg = 'HS256'): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg }).sign(key);
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('TokenService', () => {
  it('issues an HS256 token whose claims verify', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const tokens = service(clock, 900);
    const issued = await tokens.issue(SUBJECT);
    expect(issued.expires_in).toBe(900);
    expect(Object.keys(issued).sort()).toEqual(['expires_in', 'token']);
    const header = JSON.parse(Buffer.from(issued.token.split('.')[0] ?? '', 'base64url').toString());
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });

    const claims = await tokens.verify(issued.token);
    const iat = clock.now() / 1000;
    expect(claims).toMatchObject({ sub: 'alice', role: 'operator', grants: GRANTS, iat, exp: iat + 900 });
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect((await tokens.verify((await tokens.issue(SUBJECT)).token)).jti).not.toBe(claims.jti);
  });

  it('refuses an expired token (past exp + leeway) with a ManualClock', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const tokens = service(clock, 60);
    const { token } = await tokens.issue(SUBJECT);
    clock.advance(62_000);
    await expect(tokens.verify(token)).resolves.toBeTruthy();
    clock.advance(10_000);
    const err = await rejection(tokens.verify(token));
    expect(err.statusCode).toBe(401);
    expect(err.message).toBe('invalid token: expired');
  });

  it('refuses a token whose exp is in the past', async () => {
    const token = await new SignJWT({ role: 'admin', grants: [] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setJti('j1')
      .setIssuedAt(nowSeconds() - 7200)
      .setExpirationTime(nowSeconds() - 3600)
      .sign(key);
    expect((await rejection(new TokenService(JWT_SECRET, { expirySeconds: () => 60 }).verify(token))).message).toBe('invalid token: expired');
  });

  it('refuses a token signed with another secret', async () => {
    const other = new TokenService('another-secret-that-is-long-enough-xyz', { clock: new ManualClock(), expirySeconds: () => 60 });
    const { token } = await other.issue(SUBJECT);
    expect((await rejection(service().verify(token))).message).toBe('invalid token: signature verification failed');
  });

  it('refuses alg: none and algorithms other than HS256', async () => {
    const exp = nowSeconds() + 600;
    const payload = { sub: 'alice', jti: 'j1', role: 'admin', grants: GRANTS, iat: nowSeconds(), exp };
    const unsigned = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.`;
    const tokens = new TokenService(JWT_SECRET, { expirySeconds: () => 60 });
    expect((await rejection(tokens.verify(unsigned))).message).toBe('invalid token: algorithm not allowed (HS256 only)');
    expect((await rejection(tokens.verify(await signed(payload, 'HS512')))).message).toBe('invalid token: algorithm not allowed (HS256 only)');
  });

  it.each(['garbage', 'a.b.c', 'a.b', '', 'a.b.c.d.e'])('refuses malformed %j', async (token) => {
    expect((await rejection(service().verify(token))).message).toBe('invalid token: malformed');
  });

  it('refuses tokens over 8 KiB before parsing', async () => {
    const huge = `${'a'.repeat(MAX_TOKEN_LENGTH)}.b.c`;
    expect((await rejection(service().verify(huge))).message).toBe('invalid token: too long');
  });

  it.each(['sub', 'jti', 'iat', 'exp', 'role', 'grants'])('refuses a token missing %s', async (claim) => {
    const full: JWTPayload = { sub: 'alice', jti: 'j1', role: 'admin', grants: GRANTS, iat: nowSeconds(), exp: nowSeconds() + 600 };
    delete full[claim];
    const tokens = new TokenService(JWT_SECRET, { expirySeconds: () => 60 });
    expect((await rejection(tokens.verify(await signed(full)))).message).toMatch(new RegExp(`^invalid token: missing (or invalid )?"${claim}" claim$`));
  });

  it('refuses a token with an unknown role or malformed grants', async () => {
    const base = { sub: 'alice', jti: 'j1', iat: nowSeconds(), exp: nowSeconds() + 600 };
    const tokens = new TokenService(JWT_SECRET, { expirySeconds: () => 60 });
    expect((await rejection(tokens.verify(await signed({ ...base, role: 'root', grants: [] })))).message).toBe(
      'invalid token: missing or invalid "role" claim',
    );
    expect((await rejection(tokens.verify(await signed({ ...base, role: 'admin', grants: [{ tenants: 'x' }] })))).message).toBe(
      'invalid token: missing or invalid "grants" claim',
    );
  });
});
