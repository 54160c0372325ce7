import { errors } from '@sluice/core';
import { sendError } from '@sluice/http';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Methods a page of another site may not make the browser send here. */
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What browsers say of a request made by a page of another origin (any browser since 2023 sends it). */
const FOREIGN = new Set(['cross-site', 'same-site']);

/**
 * Why a write from a browser page must be refused, or undefined. Where the browser says which
 * site a request comes from (Sec-Fetch-Site), that decides. It says so only to https and loopback
 * addresses: to a gateway reached over plain http by another name (a LAN address, an ingress) it
 * sends only Origin, so there a page whose Origin names another host is refused. Host names are
 * compared without ports (a proxy's `Host $host` drops the port the browser saw), and a proxy that
 * rewrites Host must say the original in X-Forwarded-Host.
 */
function foreignWrite(headers: FastifyRequest['headers']): string | undefined {
  const site = headers['sec-fetch-site'];
  if (typeof site === 'string') return FOREIGN.has(site) ? `Sec-Fetch-Site: ${site}` : undefined;
  const origin = headers.origin;
  if (origin === undefined) return undefined;
  const from = hostnameOf(origin);
  const forwarded = headers['x-forwarded-host'];
  const to = [headers.host, ...(typeof forwarded === 'string' ? forwarded.split(',') : [])].map((host) => host && hostnameOf(`http://${host.trim()}`));
  return from !== undefined && to.includes(from) ? undefined : `Origin: ${origin}`;
}

function hostnameOf(url: string): string | undefined {
  return URL.canParse(url) ? new URL(url).hostname : undefined;
}

/** Paths whose answers are JSON carrying tenants' data, approval signatures or tokens. */
const API_PREFIXES = ['/v1/', '/admin/', '/api/'];

/**
 * What the API tells browsers. A page of another origin cannot change anything: with
 * authentication off, a body-less POST sent with `mode: 'no-cors'` (a breaker trip, a replay)
 * would otherwise run as the anonymous admin; with it on, such a request carries no credential
 * anyway. Browsers mark it `Sec-Fetch-Site: cross-site` (another port of the same host is
 * `same-site`), or, over plain http, sends an Origin naming another host; the admin UI is
 * same-origin, and clients outside a browser send neither header.
 * API answers are not stored by caches or sniffed as another type, and Swagger UI cannot be
 * framed (the admin UI sets its own headers, admin-ui.ts).
 */
export function installBrowserGuards(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    const foreign = SAFE.has(request.method) ? undefined : foreignWrite(request.headers);
    if (foreign === undefined) return done();
    sendError(reply, errors.forbidden(`a page of another site cannot send ${request.method} requests to this API (${foreign})`));
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
