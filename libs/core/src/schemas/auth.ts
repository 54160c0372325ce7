import { z } from 'zod';

export const LoginInput = z.object({
  username: z.string().min(1).max(1024),
  password: z.string().min(1).max(1024),
});
export type LoginInput = z.infer<typeof LoginInput>;

export const LoginResult = z.object({
  token: z.string().describe('HS256 JWT; send as Authorization: Bearer <token>'),
  expires_in: z.number().int().describe('seconds until the token expires'),
});

export const LogoutResult = z.object({ status: z.literal('logged_out') });

const CallerGrant = z.object({
  tenants: z.array(z.string()),
  namespaces: z.array(z.string()),
  providers: z.array(z.string()),
  actions: z.array(z.string()),
});

/** Who the credential is: what the admin UI needs to hide what the caller's role cannot do (the API enforces either way). */
export const CallerIdentity = z.object({
  id: z.string().describe('API key name, username, or `anonymous` when authentication is disabled'),
  role: z.enum(['admin', 'operator', 'viewer']),
  method: z.enum(['api_key', 'jwt', 'anonymous']),
  grants: z.array(CallerGrant),
  permissions: z.array(z.string()).describe("the permissions of the caller's role (dispatch, read, silences_manage, ...)"),
  token_expires_at: z.string().optional().describe('JWT callers: when the token expires (RFC 3339)'),
});
export type CallerIdentity = z.infer<typeof CallerIdentity>;
