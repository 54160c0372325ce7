import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { launchChromium, screenshotDir } from '../support/browser.js';
import { poll } from '../support/poll.js';
import { credentialsFile, keyHeader, WILDCARD_GRANT } from '../support/credentials.js';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { rulesDir } from '../support/rules-dir.js';
import { type Backend, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const RULES = `
rules:
  - { name: wires-need-approval, priority: 1, condition: { field: action.action_type, eq: wire }, action: { type: require_approval, message: check the amount, ttl_seconds: 3600 } }
  - { name: no-spam, priority: 5, condition: { field: action.action_type, eq: spam }, action: { type: suppress } }
  - { name: start-onboarding, priority: 6, condition: { field: action.action_type, eq: onboard }, action: { type: chain, chain_name: onboarding } }
  - { name: digest, priority: 7, condition: { field: action.action_type, eq: digest }, action: { type: group, group_by: [payload.cluster], group_wait_seconds: 3600 } }
`;
const ONBOARDING = {
  name: 'onboarding',
  steps: [
    { name: 'create-account', provider: 'sink', action_type: 'create' },
    { name: 'send-welcome', provider: 'sink', action_type: 'welcome' },
  ],
};
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

type Body = Record<string, unknown>;

export interface UiFixture {
  /**
   * The gateway (auth on: keys `admin` and `viewer`, `scoped` (an operator granted tenant acme in
   * namespace payments only), user `oncall` (operator) with password `correct horse battery`).
   */
  readonly gw: RunningGateway;
  /** The `sink` provider's endpoint. */
  readonly sink: HttpSink;
  /** Where screenshots go (screenshotDir()). */
  readonly shots: string;
  /** Console errors of every page opened. */
  readonly consoleErrors: string[];
  readonly admin: Record<string, string>;
  dispatch(overrides: Body, headers?: Record<string, string>): Promise<Body>;
  /** Waits until the chain run has completed. */
  chainCompleted(chainId: string): Promise<void>;
  /** A fresh browser context (its own session storage) at the sign-in page; `zone` sets its time zone and locale. */
  openUi(viewport?: { width: number; height: number }, zone?: { timezoneId: string; locale: string }): Promise<{ context: BrowserContext; page: Page }>;
  signInWithKey(page: Page, key: string): Promise<void>;
  /** Follows the navigation link of a view and waits for its heading. */
  go(page: Page, view: string): Promise<void>;
  screenshot(page: Page, name: string, fullPage?: boolean): Promise<void>;
}

/**
 * A gateway with authentication on, a webhook sink, rules for approvals, suppression, a chain and
 * a group (`digest`, by payload.cluster), breakers on and a quota, plus a headless Chromium:
 * started before the suite's tests, stopped after.
 */
export function uiFixture(backend: Backend): UiFixture {
  let gw: RunningGateway | undefined;
  let sink: HttpSink | undefined;
  let browser: Browser | undefined;
  const shots = screenshotDir();
  const consoleErrors: string[] = [];
  const admin = keyHeader('admin');
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the UI fixture has no ${what} yet (used outside a test?)`);
    return value;
  };

  beforeAll(async () => {
    sink = await startSink();
    const { file } = credentialsFile({
      keys: [
        { name: 'admin', role: 'admin', grants: [WILDCARD_GRANT] },
        { name: 'viewer', role: 'viewer', grants: [WILDCARD_GRANT] },
        { name: 'scoped', role: 'operator', grants: [{ tenants: ['acme'], namespaces: ['payments'], actions: ['*'] }] },
      ],
      users: [{ name: 'oncall', role: 'operator', grants: [WILDCARD_GRANT], password: 'correct horse battery' }],
    });
    gw = await startGateway(backend, {
      auth: { enabled: true, file },
      providers: [{ name: 'sink', type: 'webhook', url: sink.url }],
      rules: { directory: rulesDir({ 'rules.yaml': RULES }) },
      circuit_breaker: { enabled: true },
      chains: { definitions: [ONBOARDING] },
    });
    const quota = await postJson(
      `${gw.url}/v1/quotas`,
      { namespace: 'payments', tenant: 'acme', max_actions: 1000, window: 'hourly', overage_behavior: 'block' },
      admin,
    );
    expect(quota.status).toBe(201);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await sink?.close();
  });

  const fixture: UiFixture = {
    get gw() {
      return started(gw, 'gateway');
    },
    get sink() {
      return started(sink, 'sink');
    },
    shots,
    consoleErrors,
    admin,
    async dispatch(overrides, headers = admin) {
      return (await postJson(`${fixture.gw.url}/v1/dispatch`, sampleAction({ provider: 'sink', ...overrides }), headers)).body as Body;
    },
    async chainCompleted(chainId) {
      await poll('the chain to complete', async () => {
        const run = await requestJson('GET', `${fixture.gw.url}/v1/chains/${chainId}`, undefined, admin);
        return run.body?.['status'] === 'completed';
      });
    },
    async openUi(viewport = DESKTOP, zone?) {
      const context = await started(browser, 'browser').newContext({ viewport, ...zone });
      // Well inside the test's own timeout, so a missing element fails with Playwright's message.
      context.setDefaultTimeout(8000);
      const page = await context.newPage();
      page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
      await page.goto(`${fixture.gw.url}/ui/`);
      return { context, page };
    },
    async signInWithKey(page, key) {
      await page.getByLabel('Key', { exact: true }).fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByTestId('identity').waitFor();
    },
    async go(page, view) {
      await page
        .getByRole('navigation', { name: 'Views' })
        .getByRole('link', { name: new RegExp(`^${view}$`, 'i') })
        .click();
      await page.locator(`#${view}-title`).waitFor();
    },
    async screenshot(page, name, fullPage = true) {
      await page.screenshot({ path: join(shots, `${name}.png`), fullPage });
    },
  };
  return fixture;
}
