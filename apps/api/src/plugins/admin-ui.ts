import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

const UI_PREFIX = '/ui/';

// The app loads only its own files and talks only to this origin; no inline script or style, no framing.
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The built app (apps/ui/dist), or null when it was not built (the API then serves no UI). */
function uiDistDir(): string | null {
  try {
    const dir = join(dirname(createRequire(import.meta.url).resolve('@sluice/ui/package.json')), 'dist');
    return existsSync(join(dir, 'index.html')) ? dir : null;
  } catch {
    return null;
  }
}

/**
 * Serves the admin UI at /ui/. Vite names every asset by its content hash, so assets are cached
 * for a year; index.html is revalidated on every load so a new release is picked up at once.
 */
export async function installAdminUi(app: FastifyInstance): Promise<void> {
  const root = uiDistDir();
  if (root === null) {
    app.log.warn({ event: 'ui_missing' }, 'admin UI not built (apps/ui/dist): /ui/ is not served');
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/ui',
    redirect: true,
    cacheControl: false,
    schemaHide: true,
    setHeaders: (reply, path) => {
      const asset = relative(root, path).startsWith(`assets${sep}`);
      reply.header('cache-control', asset ? 'public, max-age=31536000, immutable' : 'no-cache');
      reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
    },
  });
  app.get('/', { config: { access: 'public' }, schema: { hide: true } }, (_request, reply) => reply.redirect(UI_PREFIX));
}
