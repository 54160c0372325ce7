import { errors } from '@sluice/core';
import { sendError } from '@sluice/http';
import type { FastifyInstance } from 'fastify';

/** Methods a page of another site may not make the browser send here. */
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What browsers say of a request made by a page of another origin (any browser since 2023 sends it). */
const FOREIGN = new Set(['cross-site', 'same-site']);

/** Paths whose answers are JSON carrying tenants' data, approval signatures or tokens. */
const API_PREFIXES = ['/v1/', '/admin/', '/api/'];

/**
 * What the API tells browsers. A page of another origin cannot change anything: with
 * authentication off, a body-less POST sent with `mode: 'no-cors'` (a breaker trip, a replay)
 * would otherwise run as the anonymous admin; with it on, such a request carries no credential
 * anyway. Browsers mark it `Sec-Fetch-Site: cross-site` (another port of the same host is
 * `same-site`); the admin UI is same-origin, and clients outside a browser send no such header.
 * API answers are not stored by caches or sniffed as another type, and Swagger UI cannot be
 * framed (the admin UI sets its own headers, admin-ui.ts).
 */
export function installBrowserGuards(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    const site = request.headers['sec-fetch-site'];
    if (SAFE.has(request.method) || typeof site !== 'string' || !FOREIGN.has(site)) return done();
    sendError(reply, errors.forbidden(`a page of another site cannot send ${request.method} requests to this API (Sec-Fetch-Site: ${site})`));
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    const url = request.url;
    if (API_PREFIXES.some((prefix) => url.startsWith(prefix))) {
      if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
      reply.header('x-content-type-options', 'nosniff');
    } else if (url.startsWith('/swagger-ui')) {
      reply.header('x-frame-options', 'DENY');
      reply.header('content-security-policy', "frame-ancestors 'none'");
      reply.header('x-content-type-options', 'nosniff');
    }
    done(null, payload);
  });
}
