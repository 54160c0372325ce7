import { ANONYMOUS_CALLER, assertRoleAllows, type Authenticator, type Caller, type Permission } from '@sluice/auth';
import { errors } from '@sluice/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RateLimiter } from '../rate-limiter.js';

/**
 * What a route needs from its caller: nothing (`public`), any valid credentials
 * (`authenticated`), or a role holding a permission. Every route declares one in
 * `config.access`; a route without it fails start-up, so none is left open by accident.
 */
export type Access = Permission | 'public' | 'authenticated';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    /** Set on every protected route before its handler runs; null on public routes. */
    caller: Caller | null;
  }
}

/** Routes added by plugins (OpenAPI document, Swagger UI) that cannot declare access themselves. */
const PUBLIC_PREFIXES = ['/api-doc', '/swagger-ui'];

export interface AccessControlOptions {
  /** Null when auth is disabled: every protected request then acts as the anonymous admin. */
  authenticator: Authenticator | null;
  rateLimiter: RateLimiter;
}

export function installAccessControl(app: FastifyInstance, opts: AccessControlOptions): void {
  app.decorateRequest('caller', null);

  // Registered before the OpenAPI plugin, so its copy of each route sees `security: []` on public ones.
  app.addHook('onRoute', (route) => {
    if (route.config?.access === undefined) {
      if (!PUBLIC_PREFIXES.some((prefix) => route.url.startsWith(prefix))) {
        throw new Error(`route ${String(route.method)} ${route.url} declares no config.access`);
      }
      route.config = { ...route.config, access: 'public' };
    }
    if (route.config.access === 'public' && route.schema) route.schema = { ...route.schema, security: [] };
  });

  // Authentication, then the role check, then the caller's rate limit: a request refused earlier is not counted.
  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access;
    // undefined: no route matched; the not-found handler answers 404 whoever asks.
    if (access === undefined || access === 'public') return;
    const caller = opts.authenticator ? await opts.authenticator.authenticate(request.headers) : ANONYMOUS_CALLER;
    request.caller = caller;
    if (access !== 'authenticated') assertRoleAllows(caller.role, access);
    await opts.rateLimiter.checkCaller(caller.id);
  });
}

/** The authenticated caller of a protected route (a programming error on a public one). */
export function callerOf(request: FastifyRequest): Caller {
  if (request.caller === null) throw errors.internal(new Error(`no caller on ${request.method} ${request.url}: route is public`));
  return request.caller;
}
