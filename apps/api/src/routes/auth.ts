import { PERMISSIONS, roleAllows, type Authenticator } from '@sluice/auth';
import { CallerIdentity, ErrorBody, LoginInput, LoginResult, LogoutResult, errors } from '@sluice/core';
import type { FastifyInstance } from 'fastify';
import { requestSchema, responseSchema } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';

const tags = ['auth'];
const error = responseSchema(ErrorBody);

/** Login and logout (with auth disabled both answer 404 `authentication is not enabled`), and who the caller is. */
export async function authRoutes(app: FastifyInstance, opts: { authenticator: Authenticator | null }): Promise<void> {
  const authenticator = (): Authenticator => {
    if (!opts.authenticator) throw errors.featureNotEnabled('authentication');
    return opts.authenticator;
  };

  app.post<{ Body: LoginInput }>(
    '/v1/auth/login',
    {
      config: { access: 'public' },
      schema: {
        tags,
        summary: 'Exchange a username and password for a JWT (failed attempts are throttled per username: 429)',
        body: requestSchema(LoginInput),
        response: { 200: responseSchema(LoginResult), 400: error, 401: error, 404: error, 429: error },
      },
    },
    async (request) => authenticator().login(request.body.username, request.body.password),
  );

  app.post(
    '/v1/auth/logout',
    {
      // With auth disabled the anonymous caller has no token: 404 before anything else.
      onRequest: async () => void authenticator(),
      config: { access: 'authenticated' },
      schema: {
        tags,
        summary: 'Revoke the JWT in the Authorization header, on every replica',
        security: [{ bearer: [] }],
        response: { 200: responseSchema(LogoutResult), 400: error, 401: error, 404: error },
      },
    },
    async (request) => {
      await authenticator().logout(callerOf(request));
      return { status: 'logged_out' as const };
    },
  );

  app.get(
    '/v1/auth/me',
    {
      config: { access: 'authenticated' },
      schema: {
        tags,
        summary: "The caller: id, role, grants and the role's permissions (the anonymous admin when authentication is disabled)",
        response: { 200: responseSchema(CallerIdentity), 401: error },
      },
    },
    async (request): Promise<CallerIdentity> => {
      const caller = callerOf(request);
      return {
        id: caller.id,
        role: caller.role,
        method: caller.method,
        grants: caller.grants,
        permissions: PERMISSIONS.filter((p) => roleAllows(caller.role, p)),
        ...(caller.tokenExpiresAt === undefined ? {} : { token_expires_at: new Date(caller.tokenExpiresAt).toISOString() }),
      };
    },
  );
}
