import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/start-gateway.js';

const ASSETS = new URL('../../apps/ui/dist/assets/', import.meta.url);

/** How the API serves the UI bundle (npm test builds it first): cache headers, CSP, redirects, and `server.ui: false`. */
describe('the admin UI bundle over HTTP', () => {
  let on: RunningGateway;
  let off: RunningGateway;

  beforeAll(async () => {
    on = await startGateway('memory');
    off = await startGateway('memory', { server: { ui: false } });
  });
  afterAll(async () => {
    await on?.close();
    await off?.close();
  });

  it('serves index.html revalidated on every load, with the CSP and hardening headers', async () => {
    const res = await fetch(`${on.url}/ui/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const csp = res.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'self'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) {
      expect(csp).toContain(directive);
    }
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await res.text();
    // No inline script or style: the CSP would refuse it.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|style="/);
    expect(html).toMatch(/<script type="module" crossorigin src="\/ui\/assets\/index-[\w-]+\.js">/);
  });

  it('caches the content-hashed assets for a year', async () => {
    const assets = readdirSync(ASSETS).filter((f) => f.endsWith('.js') || f.endsWith('.css'));
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      const res = await fetch(`${on.url}/ui/assets/${asset}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      await res.arrayBuffer();
    }
  });

  it('redirects / and /ui to /ui/; an unknown file is the API JSON 404', async () => {
    for (const path of ['/', '/ui']) {
      const res = await fetch(`${on.url}${path}`, { redirect: 'manual' });
      expect([301, 302]).toContain(res.status);
      expect(res.headers.get('location')).toBe('/ui/');
    }
    const missing = await fetch(`${on.url}/ui/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('serves nothing with server.ui: false, and the API is unaffected', async () => {
    for (const path of ['/', '/ui/', '/ui']) {
      const res = await fetch(`${off.url}${path}`, { redirect: 'manual' });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
    expect((await fetch(`${off.url}/v1/auth/me`)).status).toBe(200);
  });

  it('keeps the UI routes out of the OpenAPI document', async () => {
    const doc = (await (await fetch(`${on.url}/api-doc/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p === '/' || p.startsWith('/ui'))).toEqual([]);
    expect(doc.paths).toHaveProperty('/v1/auth/me');
    expect(doc.paths).toHaveProperty('/v1/approvals/{namespace}/{tenant}/{id}/decision');
  });
});
