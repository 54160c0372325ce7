import type { Auth, AuthDeps, AuthSettings } from './create-auth.js';

/** createAuth, loaded only when auth is enabled (it brings argon2's native addon and jose); null when disabled. */
export async function loadAuth(config: AuthSettings, deps: AuthDeps): Promise<Auth | null> {
  if (!config.enabled) return null;
  const { createAuth } = await import('./create-auth.js');
  return createAuth(config, deps);
}
