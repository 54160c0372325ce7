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
/*
 * With authentication off, a page of another site must not change the gateway through the
 * operator's browser: a body-less POST sent with `mode: 'no-cors'` needs no preflight and would run
 * as the anonymous admin. Two ways a browser reaches a gateway: at a loopback address (it then says
 * Sec-Fetch-Site; here another port of the same host, which browsers call same-site), and over plain
 * http by a name (a LAN host, an ingress; names mapped to 127.0.0.1 here), where it sends only Origin.
 */
describe('a page of another origin, in a real browser', () => {
  let gw: RunningGateway;
  let page: Server;
  let browser: Browser;
  let pagePort: number;
  let target = '';
  const breaker = async () =>
    ((await requestJson('GET', `${gw.url}/admin/circuit-breakers`)).body as { circuit_breakers: { provider: string; state: string }[] }).circuit_breakers.find(
      (b) => b.provider === 'sink',
    )?.state;

  beforeAll(async () => {
    gw = await startGateway('memory', { circuit_breaker: { enabled: true }, providers: [{ name: 'sink', type: 'noop' }] });
    // The hostile page: fires the trip at the gateway's URL given by the test on load, then says it did.
    page = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<script>fetch(${JSON.stringify(target)}, { method: 'POST', mode: 'no-cors' }).finally(() => { document.title = 'sent'; });</script>`);
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => page.once('listening', resolve));
    pagePort = (page.address() as AddressInfo).port;
    browser = await launchChromium('--host-resolver-rules=MAP *.test 127.0.0.1');
  });
  afterAll(async () => {
    await browser?.close();
    page?.close();
    await gw?.close();
  });

  it.each([
    ['at a loopback address (Sec-Fetch-Site)', 'http://127.0.0.1', () => gw.url],
    ['over plain http by another name (Origin only)', 'http://evil.test', () => gw.url.replace('127.0.0.1', 'gateway.test')],
  ])('cannot trip a breaker %s through a no-cors POST, while a client outside a browser still can', async (_how, pageHost, gatewayUrl) => {
    expect(await breaker()).toBe('closed');
    target = `${gatewayUrl()}/admin/circuit-breakers/sink/trip`;
    const tab = await browser.newPage();
    await tab.goto(`${pageHost}:${pagePort}/`);
    await poll(
      'the page to send its request',
      () => tab.title(),
      (title) => title === 'sent',
    );
    await tab.close();
    expect(await breaker()).toBe('closed');
    expect((await requestJson('POST', `${gw.url}/admin/circuit-breakers/sink/trip`)).status).toBe(200);
    expect(await breaker()).toBe('open');
    expect((await requestJson('POST', `${gw.url}/admin/circuit-breakers/sink/reset`)).status).toBe(200);
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

  it('refuses writes whose Origin names another host (or none), and takes those of its own host on any port or behind a proxy', async () => {
    const trip = (headers: Record<string, string>) => requestJson('POST', `${gw.url}/admin/circuit-breakers/sink/trip`, undefined, headers);
    for (const origin of ['http://evil.test', 'null', 'http://127.0.0.2:8080']) {
      expect(await trip({ origin })).toMatchObject({ status: 403, body: { code: 'FORBIDDEN', error: expect.stringContaining(`Origin: ${origin}`) } });
    }
    expect(await trip({ origin: 'http://gateway.test', 'x-forwarded-host': 'other.test, evil.test' })).toMatchObject({ status: 403 });
    expect((await requestJson('GET', `${gw.url}/v1/audit`, undefined, { origin: 'http://evil.test' })).status).toBe(200);
    // A proxy's `Host $host` drops the port the page was loaded from; a proxy may also forward the name.
    expect((await trip({ origin: 'http://127.0.0.1:9999' })).status).toBe(200);
    expect((await trip({ origin: 'https://sluice.example.test', 'x-forwarded-host': 'sluice.example.test' })).status).toBe(200);
    // Where the browser says the request is same-origin, that decides: a proxy rewriting Host (the UI's dev server) must not break the UI.
    expect((await trip({ origin: 'http://localhost:5173', 'sec-fetch-site': 'same-origin' })).status).toBe(200);
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
