import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser.js';
import { poll } from '../support/poll.js';
import { requestJson, startGateway, type RunningGateway } from '../support/start-gateway.js';

/*
 * With authentication off, a page of another site (here: another port of the same host, which
 * browsers call same-site) must not change the gateway through the operator's browser: a
 * body-less POST sent with `mode: 'no-cors'` needs no preflight and would run as the anonymous admin.
 */
describe('a page of another origin, in a real browser', () => {
  let gw: RunningGateway;
  let page: Server;
  let browser: Browser;
  const breaker = async () =>
    ((await requestJson('GET', `${gw.url}/admin/circuit-breakers`)).body as { circuit_breakers: { provider: string; state: string }[] }).circuit_breakers.find(
      (b) => b.provider === 'sink',
    )?.state;

  beforeAll(async () => {
    gw = await startGateway('memory', { circuit_breaker: { enabled: true }, providers: [{ name: 'sink', type: 'noop' }] });
    // The hostile page: fires the trip on load, then says it did.
    page = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(
        `<script>fetch(${JSON.stringify(`${gw.url}/admin/circuit-breakers/sink/trip`)}, { method: 'POST', mode: 'no-cors' }).finally(() => { document.title = 'sent'; });</script>`,
      );
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => page.once('listening', resolve));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    page?.close();
    await gw?.close();
  });

  it('cannot trip a breaker through a no-cors POST, while the same request from a client outside a browser still can', async () => {
    expect(await breaker()).toBe('closed');
    const tab = await browser.newPage();
    await tab.goto(`http://127.0.0.1:${(page.address() as AddressInfo).port}/`);
    await poll(
      'the page to send its request',
      () => tab.title(),
      (title) => title === 'sent',
    );
    await tab.close();
    expect(await breaker()).toBe('closed');
    expect((await requestJson('POST', `${gw.url}/admin/circuit-breakers/sink/trip`)).status).toBe(200);
    expect(await breaker()).toBe('open');
  });
});

describe('what the API tells browsers', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway('memory', { circuit_breaker: { enabled: true }, providers: [{ name: 'sink', type: 'noop' }] });
  });
  afterAll(() => gw.close());

  it('refuses writes marked cross-site or same-site with 403, and lets reads and same-origin writes through', async () => {
    for (const site of ['cross-site', 'same-site']) {
      const refused = await requestJson('POST', `${gw.url}/admin/circuit-breakers/sink/trip`, undefined, { 'sec-fetch-site': site });
      expect(refused).toMatchObject({ status: 403, body: { code: 'FORBIDDEN', error: expect.stringContaining(`Sec-Fetch-Site: ${site}`) } });
      expect((await requestJson('GET', `${gw.url}/v1/audit`, undefined, { 'sec-fetch-site': site })).status).toBe(200);
    }
    expect((await requestJson('POST', `${gw.url}/admin/circuit-breakers/sink/reset`, undefined, { 'sec-fetch-site': 'same-origin' })).status).toBe(200);
  });

  it('API answers are not cached or sniffed; Swagger UI cannot be framed', async () => {
    const audit = await fetch(`${gw.url}/v1/audit`);
    expect(audit.headers.get('cache-control')).toBe('no-store');
    expect(audit.headers.get('x-content-type-options')).toBe('nosniff');
    const swagger = await fetch(`${gw.url}/swagger-ui/`);
    expect(swagger.status).toBe(200);
    expect(swagger.headers.get('x-frame-options')).toBe('DENY');
    expect(swagger.headers.get('content-security-policy')).toBe("frame-ancestors 'none'");
  });
});
