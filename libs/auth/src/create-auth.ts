import { systemClock, type Clock } from '@sluice/core';
import type { StateStore } from '@sluice/state';
import type { AuthLogger } from './auth-logger.js';
import { Authenticator } from './authenticator.js';
import { CredentialStore } from './credential-store.js';
import { CredentialsError } from './credentials.js';
import { LoginThrottle, type LoginThrottleSettings } from './login-throttle.js';
import { RevocationList } from './revocation-list.js';
import { TokenService } from './token-service.js';

export interface AuthSettings {
  enabled: boolean;
  /** The credentials file; required when enabled. Relative paths resolve against the working directory. */
  file: string | null;
  watch: boolean;
  login_throttle: LoginThrottleSettings;
}

export interface AuthDeps {
  state: StateStore;
  logger: AuthLogger;
  /** Source of SLUICE_AUTH_KEY; default process.env. */
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
}

export interface Auth {
  authenticator: Authenticator;
  store: CredentialStore;
  /** Stops watching the credentials file. */
  close(): void;
}

/**
 * Wires the credential store, tokens and revocation list. Null when auth is disabled (the API then
 * uses ANONYMOUS_CALLER). Throws CredentialsError when the file cannot be used at start-up.
 */
export function createAuth(config: AuthSettings, deps: AuthDeps): Auth | null {
  if (!config.enabled) return null;
  if (!config.file) throw new CredentialsError('auth.enabled needs auth.file (the credentials file)');
  const clock = deps.clock ?? systemClock;
  const store = new CredentialStore({ file: config.file, watch: config.watch, logger: deps.logger, ...(deps.env ? { env: deps.env } : {}) });
  const tokens = new TokenService(store.jwtSecret, { clock, expirySeconds: () => store.current.jwtExpirySeconds });
  const revocations = new RevocationList(deps.state, clock);
  const loginThrottle = new LoginThrottle(deps.state, clock, config.login_throttle);
  const authenticator = new Authenticator({ credentials: store, tokens, revocations, loginThrottle });
  return { authenticator, store, close: () => store.close() };
}
