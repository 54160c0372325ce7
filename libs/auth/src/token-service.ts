import { createHash, randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { errors, systemClock, type Clock, type SluiceError } from '@sluice/core';
import { z } from 'zod';
import { GrantSchema } from './credentials-schema.js';
import type { Grant } from './grants.js';
import { ROLES, type Role } from './roles.js';

/** Tokens longer than this are refused before any parsing (JWTs we issue are far smaller). */
export const MAX_TOKEN_LENGTH = 8 * 1024;

const ALGORITHM = 'HS256';
// Replicas' clocks drift a little; a few seconds of leeway on exp/iat avoids flapping 401s.
export const CLOCK_TOLERANCE_SECONDS = 5;

export interface TokenClaims {
  /** Username. */
  sub: string;
  /** Token id (UUID v4); revocation is keyed on it. */
  jti: string;
  role: Role;
  grants: Grant[];
  /** Issued at, Unix seconds. */
  iat: number;
  /** Expires at, Unix seconds. */
  exp: number;
  /** The fingerprint of the user's password hash at login (absent in tokens of older versions). */
  cred?: string | undefined;
}

export interface IssuedToken {
  token: string;
  /** Lifetime in seconds (the login response field). */
  expires_in: number;
}

export interface TokenSubject {
  username: string;
  role: Role;
  grants: Grant[];
  /** credentialFingerprint of the user's password hash: a new password (or a re-created user) ends the token. */
  credential: string;
}

export interface TokenServiceOptions {
  clock?: Clock;
  /** Read at each issue, so a hot-reloaded jwt_expiry_seconds applies to new tokens. */
  expirySeconds: () => number;
}

const ClaimsSchema = z.object({
  sub: z.string().min(1),
  jti: z.string().min(1),
  role: z.enum(ROLES),
  grants: z.array(GrantSchema),
  iat: z.number(),
  exp: z.number(),
  cred: z.string().optional(),
});

/**
 * What a token carries of the password it was issued for: a short digest of the stored hash (itself
 * salted), so a password change or a re-created user ends the tokens issued before it.
 */
export function credentialFingerprint(passwordHash: string): string {
  return createHash('sha256').update(passwordHash).digest('base64url').slice(0, 22);
}

/** HS256 JWTs signed with `settings.jwt_secret`. No other algorithm is accepted (so no `alg: none`). */
export class TokenService {
  private readonly key: Uint8Array;
  private readonly clock: Clock;
  private readonly expirySeconds: () => number;

  constructor(secret: string, opts: TokenServiceOptions) {
    this.key = new TextEncoder().encode(secret);
    this.clock = opts.clock ?? systemClock;
    this.expirySeconds = opts.expirySeconds;
  }

  async issue(subject: TokenSubject): Promise<IssuedToken> {
    const expiresIn = this.expirySeconds();
    const now = Math.floor(this.clock.now() / 1000);
    const token = await new SignJWT({ role: subject.role, grants: subject.grants, cred: subject.credential })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(subject.username)
      .setJti(randomUUID())
      .setIssuedAt(now)
      .setExpirationTime(now + expiresIn)
      .sign(this.key);
    return { token, expires_in: expiresIn };
  }

  /** The token's claims, or a 401 `invalid token: <reason>`. */
  async verify(token: string): Promise<TokenClaims> {
    if (token.length > MAX_TOKEN_LENGTH) throw invalidToken('too long');
    let payload: unknown;
    try {
      ({ payload } = await jwtVerify(token, this.key, {
        algorithms: [ALGORITHM],
        currentDate: new Date(this.clock.now()),
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['sub', 'jti', 'iat', 'exp'],
      }));
    } catch (err) {
      throw invalidToken(reasonOf(err));
    }
    const claims = ClaimsSchema.safeParse(payload);
    if (!claims.success) {
      const field = claims.error.issues[0]?.path[0];
      throw invalidToken(`missing or invalid "${String(field ?? 'claims')}" claim`);
    }
    return claims.data;
  }
}

function invalidToken(reason: string): SluiceError {
  return errors.unauthorized(`invalid token: ${reason}`);
}

// Short, fixed reasons: jose's own messages are fine but are not a stable public surface.
function reasonOf(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'expired';
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'signature verification failed';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'algorithm not allowed (HS256 only)';
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.reason === 'missing') return `missing "${err.claim}" claim`;
    if (err.claim === 'nbf' || err.claim === 'iat') return `"${err.claim}" claim check failed`;
    return `invalid "${err.claim}" claim`;
  }
  return 'malformed';
}
