import { randomBytes } from 'node:crypto';
import { hash as argon2Hash } from '@node-rs/argon2';
import { errors } from '@sluice/core';
import { digestsEqual, hashApiKey } from './api-key-hash.js';
import { looksLikeJwt, presentedCredential, type AuthHeaders } from './auth-headers.js';
import type { Caller } from './caller.js';
import type { Credentials } from './credentials.js';
import { verifyPassword } from './password-hash.js';
import type { LoginThrottle } from './login-throttle.js';
import type { RevocationList } from './revocation-list.js';
import { credentialFingerprint, type IssuedToken, type TokenClaims, type TokenService } from './token-service.js';

export interface AuthenticatorDeps {
  /** Usually the CredentialStore; read on every call so reloads apply at once. */
  credentials: { readonly current: Credentials };
  tokens: TokenService;
  revocations: RevocationList;
  /** Limits password checks (per username across replicas, and per replica); none in unit tests that do not need it. */
  loginThrottle?: LoginThrottle;
}

const MAX_LOGIN_FIELD = 1024;

/**
 * Turns request headers into a Caller, and usernames/passwords into JWTs. Every failure is a
 * SluiceError (401, or 400 for a logout without a JWT) whose message never holds a credential.
 */
export class Authenticator {
  private dummyHash: Promise<string> | undefined;

  constructor(private readonly deps: AuthenticatorDeps) {}

  /**
   * `Authorization: Bearer <x>`: a JWT-shaped `x` is tried as a JWT first, then as an API key
   * (an API key may contain dots); `X-API-Key: <x>`: an API key only.
   */
  async authenticate(headers: AuthHeaders): Promise<Caller> {
    const presented = presentedCredential(headers);
    if (presented.kind === 'api_key' || !looksLikeJwt(presented.value)) return this.apiKeyCaller(presented.value) ?? failInvalidKey();
    let claims: TokenClaims;
    try {
      claims = await this.deps.tokens.verify(presented.value);
    } catch (jwtError) {
      // Not a valid JWT: maybe an API key with dots in it; if not, the JWT reason is the answer.
      const byKey = this.apiKeyCaller(presented.value);
      if (byKey) return byKey;
      throw jwtError;
    }
    return this.jwtCaller(claims);
  }

  /** `{token, expires_in}`; 401 `invalid credentials` for an unknown user and a wrong password alike. */
  async login(username: string, password: string): Promise<IssuedToken> {
    if (username.length > MAX_LOGIN_FIELD || password.length > MAX_LOGIN_FIELD) throw errors.unauthorized('invalid credentials');
    const { users } = this.deps.credentials.current;
    const user = users.get(username);
    const check = async () => {
      // An unknown user still costs one hash verification, so timing does not reveal which names exist.
      const hash = user?.passwordHash ?? (await this.standInHash(users.values().next().value?.passwordHash));
      return verifyPassword(hash, password);
    };
    const throttle = this.deps.loginThrottle;
    const matches = throttle === undefined ? await check() : await throttle.guard(username, check);
    if (!user || !matches) throw errors.unauthorized('invalid credentials');
    await throttle?.succeeded(username);
    return this.deps.tokens.issue({ username: user.username, role: user.role, grants: user.grants, credential: credentialFingerprint(user.passwordHash) });
  }

  /** Revokes the caller's JWT on every replica. API-key and anonymous callers have nothing to revoke. */
  async logout(caller: Caller): Promise<void> {
    if (caller.method !== 'jwt' || !caller.jti || caller.tokenExpiresAt === undefined) throw errors.badRequest('logout needs a JWT');
    await this.deps.revocations.revoke(caller.jti, caller.tokenExpiresAt);
  }

  private async jwtCaller(claims: TokenClaims): Promise<Caller> {
    if (await this.deps.revocations.isRevoked(claims.jti)) throw errors.unauthorized('token has been revoked');
    // Role and grants come from the file as it is now: removing a user or narrowing a role takes
    // effect on live tokens at the next reload, not at their expiry.
    const user = this.deps.credentials.current.users.get(claims.sub);
    if (!user) throw errors.unauthorized('invalid token: unknown user');
    // Issued for another password (changed since, or a user of the same name re-created): over.
    if (claims.cred !== credentialFingerprint(user.passwordHash)) throw errors.unauthorized('invalid token: the password changed since it was issued');
    return { id: user.username, role: user.role, grants: user.grants, method: 'jwt', jti: claims.jti, tokenExpiresAt: claims.exp * 1000 };
  }

  private apiKeyCaller(rawKey: string): Caller | null {
    const digest = hashApiKey(rawKey);
    const entry = this.deps.credentials.current.apiKeys.get(digest);
    // The map lookup found it by digest; the constant-time compare is the actual check.
    if (!entry || !digestsEqual(entry.keyHash, digest)) return null;
    return { id: entry.name, role: entry.role, grants: entry.grants, method: 'api_key' };
  }

  /** A configured user's hash (same algorithm and cost as a real check), else a generated argon2id one. */
  private standInHash(configured: string | undefined): Promise<string> {
    if (configured !== undefined) return Promise.resolve(configured);
    this.dummyHash ??= argon2Hash(randomBytes(16).toString('hex'));
    return this.dummyHash;
  }
}

function failInvalidKey(): never {
  throw errors.unauthorized('invalid API key');
}
