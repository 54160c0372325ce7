import { ANONYMOUS_CALLER, assertRoleAllows, type Authenticator, type Caller } from '@sluice/auth';
import { errors, SluiceError } from '@sluice/core';
import type { Access } from '@sluice/http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RateLimiter } from '../rate-limiter.js';

// Every route declares its `config.access` (see @sluice/http); a route without it fails start-up, so none is left open by accident.
declare module 'fastify' {
  interface FastifyRequest {
    /** Set on every protected route before its handler runs; null on public routes. */
    caller: Caller | null;
  }
  interface FastifyInstance {
    /**
     * Whether the credentials a long-lived request (a stream) came with still give the same
     * caller: false once its key is removed, its token revoked or expired, or its role or grants
     * changed. An error other than a refusal (the revocation list unreachable) keeps it.
     */
    callerUnchanged(request: FastifyRequest): Promise<boolean>;
  }
}

/** Routes added by plugins (OpenAPI document, Swagger UI, the admin UI's static files) that cannot declare access themselves. */
const PUBLIC_PREFIXES = ['/api-doc', '/swagger-ui', '/ui'];

export interface AccessControlOptions {
  /** Null when auth is disabled: every protected request then acts as the anonymous admin. */
  authenticator: Authenticator | null;
  rateLimiter: RateLimiter;
}

/**
 * The credential headers with every occurrence kept: `request.headers` holds only the first
 * `Authorization` (Node drops repeats) and joins repeated `X-API-Key`s, so a request carrying
 * two could pass on the first; two of either is a 401.
 */
function credentialHeaders(request: FastifyRequest): { authorization: string[] | undefined; 'x-api-key': string[] | undefined } {
  const { authorization, 'x-api-key': apiKey } = request.raw.headersDistinct;
  return { authorization, 'x-api-key': apiKey };
}

/** Same identity, role and grants (a token re-issued on login is the same caller). */
function sameCaller(a: Caller, b: Caller): boolean {
  return a.id === b.id && a.method === b.method && a.role === b.role && JSON.stringify(a.grants) === JSON.stringify(b.grants);
}

export function installAccessControl(app: FastifyInstance, opts: AccessControlOptions): void {
  app.decorateRequest('caller', null);
  app.decorate('callerUnchanged', async (request: FastifyRequest) => {
    const { authenticator } = opts;
    if (authenticator === null || request.caller === null) return true;
    try {
      return sameCaller(await authenticator.authenticate(credentialHeaders(request)), request.caller);
    } catch (err) {
      if (err instanceof SluiceError && (err.code === 'UNAUTHORIZED' || err.code === 'FORBIDDEN')) return false;
      request.log.warn({ err }, 'stream caller not rechecked');
      return true;
    }
  });

  // Registered before the OpenAPI plugin, so its copy of each route sees `security: []` on public ones.
  app.addHook('onRoute', (route) => {
    if (route.config?.access === undefined) {
      if (!PUBLIC_PREFIXES.some((prefix) => route.url === prefix || route.url.startsWith(`${prefix}/`))) {
        throw new Error(`route ${String(route.method)} ${route.url} declares no config.access`);
      }
      route.config = { ...route.config, access: 'public' };
    }
    if (route.config.access === 'public' && route.schema) route.schema = { ...route.schema, security: [] };
  });

  /** The role check, then the caller's rate limit; a promise only when the limiter has to count. */
  const admit = (request: FastifyRequest, access: Exclude<Access, 'public'>, caller: Caller): Promise<void> | undefined => {
    request.caller = caller;
    if (access !== 'authenticated') assertRoleAllows(caller.role, access);
    return opts.rateLimiter.enabled ? opts.rateLimiter.checkCaller(caller.id) : undefined;
  };

  // Authentication, then the role check, then the caller's rate limit: a request refused earlier is not counted.
  // A callback hook, so that with auth and rate limits off a request costs no promise here.
  app.addHook('onRequest', (request, _reply, done) => {
    const access = request.routeOptions.config.access;
    // undefined: no route matched; the not-found handler answers 404 whoever asks.
    if (access === undefined || access === 'public') return done();
    let pending: Promise<void> | undefined;
    try {
      pending = opts.authenticator
        ? opts.authenticator.authenticate(credentialHeaders(request)).then((caller) => admit(request, access, caller))
        : admit(request, access, ANONYMOUS_CALLER);
    } catch (err) {
      return done(err as Error);
    }
    if (pending === undefined) return done();
    // Like Fastify's handling of an async hook: a rejection without an error still fails the request.
    pending.then(
      () => done(),
      (err: unknown) => done((err || new Error('Undefined error has occurred')) as Error),
    );
  });
}

/** The authenticated caller of a protected route (a programming error on a public one). */
export function callerOf(request: FastifyRequest): Caller {
  if (request.caller === null) throw errors.internal(new Error(`no caller on ${request.method} ${request.url}: route is public`));
  return request.caller;
}
