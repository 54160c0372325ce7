import { wildcardGrant, type Grant } from './grants.js';
import type { Role } from './roles.js';

/** Who is making a request, as established by the Authenticator. */
export interface Caller {
  /** API key name, username (JWT `sub`) or `anonymous`. Never a secret. */
  id: string;
  role: Role;
  grants: Grant[];
  method: 'api_key' | 'jwt' | 'anonymous';
  /** JWT callers: the token id, needed to revoke it on logout. */
  jti?: string;
  /** JWT callers: epoch ms at which the token expires. */
  tokenExpiresAt?: number;
}

/** Every request's caller when authentication is disabled: an admin with one wildcard grant. */
export const ANONYMOUS_CALLER: Readonly<Caller> = deepFreeze({
  id: 'anonymous',
  role: 'admin',
  grants: [wildcardGrant()],
  method: 'anonymous',
});

// Frozen so a handler that mutates the caller cannot widen or narrow every later request.
function deepFreeze<T extends object>(value: T): T {
  for (const inner of Object.values(value)) if (inner !== null && typeof inner === 'object') deepFreeze(inner as object);
  return Object.freeze(value);
}
